"""One logical call: method, path, body, and how its answer becomes a value.

The resources build calls; the sync and async clients run them through the one exchange
(`retries.py`), so a rule about paths, bodies or answers is written once for both.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx
from pydantic import BaseModel, TypeAdapter

from lethe_client import errors

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

# The methods API.md lets carry an Idempotency-Key: each logical call gets one.
WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})


def new_idempotency_key() -> str:
    return f"lethe-py-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    json: Any = None
    params: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # Given by the caller (e.g. one derived from an import line), or generated per call.
    idempotency_key: str | None = None

    def request_headers(self) -> dict[str, str]:
        """The headers of every attempt of this call. Called once per logical call (by
        `retries.exchange`): the one generated Idempotency-Key is reused on its retries."""
        headers = dict(self.headers)
        if self.method in WRITES:
            headers["Idempotency-Key"] = self.idempotency_key or new_idempotency_key()
        return headers


def checked(response: httpx.Response) -> httpx.Response:
    if response.status_code >= 400:
        raise errors.from_response(response)
    return response


def model(cls: type[M]) -> Callable[[httpx.Response], M]:
    return lambda response: cls.model_validate(checked(response).json())


def adapted(shape: Any) -> Callable[[httpx.Response], Any]:
    """Parse with a type that is not a model class (a union, a generic page)."""
    adapter: TypeAdapter[Any] = TypeAdapter(shape)
    return lambda response: adapter.validate_python(checked(response).json())


def nothing(response: httpx.Response) -> None:
    checked(response)


def document(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = checked(response).json()
    return body


def params(**values: Any) -> dict[str, Any]:
    """Query parameters without the ones left unset."""
    return {name: value for name, value in values.items() if value is not None}


def body(**values: Any) -> dict[str, Any]:
    """A JSON body without the optional fields left unset (the server's defaults apply)."""
    return {name: value for name, value in values.items() if value is not None}
