"""uvicorn's HTTP protocol, answering the requests it cannot parse as problem+json.

A request the HTTP parser refuses (an `Idempotency-Key` holding a control character, a
malformed request line) never reaches the app: uvicorn answers it with a `text/plain` 400 of
its own. Lethe's contract is that every error is problem+json, so the parser's refusal is
rendered like any other. `lethe serve` runs uvicorn with `--http` naming `ProblemHTTPProtocol`.
"""

from __future__ import annotations

import asyncio
import json

from uvicorn.protocols.http.h11_impl import H11Protocol

from app.core.errors import PROBLEM_MEDIA_TYPE, problem_body

ProblemHTTPProtocol: type[asyncio.Protocol]


def unparsable_answer() -> bytes:
    """The whole HTTP/1.1 response to a request that could not be parsed."""
    body = json.dumps(problem_body(
        400, "bad-request", "Bad request",
        "The HTTP request could not be parsed: a header or the request line is malformed.",
    )).encode()
    head = (
        "HTTP/1.1 400 Bad Request\r\n"
        f"content-type: {PROBLEM_MEDIA_TYPE}\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class ProblemH11Protocol(H11Protocol):
    def send_400_response(self, msg: str) -> None:
        self.transport.write(unparsable_answer())
        self.transport.close()


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - uvicorn without its C parser
    ProblemHTTPProtocol = ProblemH11Protocol
else:

    class ProblemHttpToolsProtocol(HttpToolsProtocol):
        def send_400_response(self, msg: str) -> None:
            self.transport.write(unparsable_answer())
            self.transport.close()

    ProblemHTTPProtocol = ProblemHttpToolsProtocol
