"""An MCP server (the official `mcp` package's `MCPServer`, FastMCP before mcp 2) whose
tools call Lethe's HTTP API with one API key, so it runs anywhere the API is reachable.

Configured by `LETHE_URL` and `LETHE_API_KEY`; `--subject` scopes every tool to one subject
(an agent serving one user): a tool call naming another subject, or the ID of a memory about
another subject, is refused before anything changes. Transports:
stdio (the client starts `lethe mcp`) and streamable HTTP (`--transport http --port`).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from urllib.parse import quote, urlencode

import httpx
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

DEFAULT_URL = "http://127.0.0.1:8000"
# A write or a recall embeds its text first; the first one after a start loads the model.
TIMEOUT = httpx.Timeout(60.0, connect=10.0)
INSTRUCTIONS = (
    "Long-term memory about the people you help. `recall` before answering anything that "
    "depends on what you were told earlier; `remember` each durable fact a user states about "
    "themselves, one fact per call, in their words. When a user corrects a fact, `correct` "
    "the memory recall returned; when they ask you to forget something, call `forget_about` "
    "with their description of it (or `forget` with a memory's ID). Forgotten facts do not "
    "come back: never re-remember them from the conversation. Scratch notes for the task at "
    "hand are `working` memories of your run's `session`; `close_session` when it ends."
)
Volatility = Literal["structural", "preferential", "procedural", "situational", "working"]


@dataclass(frozen=True)
class Config:
    url: str
    api_key: str
    subject: str | None = None

    @classmethod
    def from_environment(cls, subject: str | None) -> Config:
        key = os.environ.get("LETHE_API_KEY")
        if not key:
            raise SystemExit("lethe mcp: set LETHE_API_KEY to an app key")
        return cls(url=os.environ.get("LETHE_URL", DEFAULT_URL).rstrip("/"), api_key=key,
                   subject=subject)


class Lethe:
    """Lethe's HTTP API as the tools call it: problem+json answers become tool errors that
    say what went wrong, so the agent can act on them."""

    def __init__(self, config: Config) -> None:
        self.config = config

    def subject(self, given: str | None) -> str:
        scoped = self.config.subject
        if scoped is not None:
            if given is not None and given != scoped:
                raise ToolError(f"This memory server is scoped to subject {scoped!r}; "
                                "omit `subject`.")
            return scoped
        if given is None:
            raise ToolError("Name the `subject`: whom the memory is about (e.g. a user ID).")
        return given

    async def memory(self, memory_id: str, *, absent: str | None = None) -> httpx.Response:
        """GET a memory a tool is about to change; refused when the server is scoped to one
        subject and the memory is about another, and with ``absent`` as the tool error when
        Lethe answers 404.

        Reading first and changing after is sound without a lock: a memory's subject never
        changes (no route edits it), so nothing done between this read and the change can
        move the memory into or out of scope, and the change names the very ID checked."""
        found = await self.call("GET", memory_path(memory_id), absent=absent)
        scoped = self.config.subject
        if scoped is not None and found.json().get("subject") != scoped:
            raise ToolError(f"Memory {memory_id} is not about subject {scoped!r}, the only "
                            "subject this memory server serves; nothing was changed.")
        return found

    async def call(self, method: str, path: str, *, body: Any = None,
                   headers: dict[str, str] | None = None, absent: str | None = None,
                   ) -> httpx.Response:
        async with httpx.AsyncClient(base_url=self.config.url, timeout=TIMEOUT) as client:
            try:
                response = await client.request(
                    method, path, json=body,
                    headers={"Authorization": f"Bearer {self.config.api_key}", **(headers or {})})
            except httpx.HTTPError as error:
                raise ToolError(f"Lethe at {self.config.url} did not answer: {error}") from None
        if response.status_code == 404 and absent is not None:
            raise ToolError(absent)
        if response.status_code >= 400:
            raise ToolError(_problem(response))
        return response


def memory_path(memory_id: str) -> str:
    """A memory's URL path. Only a UUID is accepted, so the check and the change always name
    the same memory (an ID holding `/`, `?` or `..` could point one of them elsewhere)."""
    try:
        return f"/v1/memories/{uuid.UUID(memory_id)}"
    except ValueError:
        raise ToolError(f"{memory_id!r} is not a memory ID: pass the `id` recall returned."
                        ) from None


def _problem(response: httpx.Response) -> str:
    try:
        problem = response.json()
    except ValueError:
        return f"Lethe answered {response.status_code}."
    title = problem.get("title", "Refused") if isinstance(problem, dict) else "Refused"
    detail = problem.get("detail", "") if isinstance(problem, dict) else ""
    return f"{title} ({response.status_code}): {detail}".rstrip(": ")


def _memory(memory: dict[str, Any]) -> dict[str, Any]:
    """What an agent needs of a Memory object."""
    return {key: memory.get(key)
            for key in ("id", "subject", "text", "state", "flags", "volatility", "session",
                        "expires_at")}


SubjectArg = Annotated[str | None, Field(
    description="Whom the memory is about (a user ID). Omit when the server is scoped to "
    "one subject.")]


def build(config: Config) -> MCPServer:
    """The MCP server: one tool per memory operation, each a call to Lethe's API."""
    lethe = Lethe(config)
    server: MCPServer = MCPServer("lethe", instructions=INSTRUCTIONS)

    @server.tool()
    async def remember(
        text: Annotated[str, Field(description="One fact, as the user said it, e.g. "
                                   "'I moved to Porto in May'. At most 8000 characters.")],
        subject: SubjectArg = None,
        volatility: Annotated[Volatility, Field(
            description="How long it stays true: `structural` (identity, home), "
            "`preferential` (tastes; the default), `procedural` (how they like things "
            "done), `situational` (this week's plans), `working` (scratch for this run only: "
            "give `session`).")] = "preferential",
        session: Annotated[str | None, Field(
            description="Your current run or conversation ID. `close_session` with it "
            "forgets the run's `working` memories.")] = None,
        expires_at: Annotated[str | None, Field(
            description="When it stops being true, as an RFC 3339 time with its offset "
            "(e.g. '2026-12-12T00:00:00Z' for 'in Tokyo until the 12th'); from then on it is "
            "no longer recalled. Omit when it does not expire.")] = None,
    ) -> dict[str, Any]:
        """Store a durable fact about a user. Contradicted older facts are flagged by Lethe;
        a text that asks to forget something is handled as a forget instead."""
        body = {"subject": lethe.subject(subject), "text": text, "volatility": volatility}
        if session is not None:
            body["session"] = session
        if expires_at is not None:
            body["expires_at"] = expires_at
        answer = (await lethe.call("POST", "/v1/memories", body=body)).json()
        if answer.get("stored") is False:
            return {"stored": False, "forgot": answer["effects"]["retraction"]}
        return {"stored": True, "memory": _memory(answer),
                "suspected": answer.get("effects", {}).get("suspected", [])}

    @server.tool()
    async def recall(
        query: Annotated[str, Field(description="What you need to know, as a question or "
                                    "keywords, e.g. 'where does the user live'.")],
        subject: SubjectArg = None,
        limit: Annotated[int, Field(ge=1, le=100, description="How many memories at most.")
                         ] = 10,
    ) -> dict[str, Any]:
        """Find what Lethe remembers about a user that is relevant to a query, best first.
        A result flagged `suspect` may be outdated: confirm it with the user before relying
        on it. `retractions` lists what the user asked to forget: do not bring it up."""
        answer = (await lethe.call("POST", "/v1/recall", body={
            "subject": lethe.subject(subject), "query": query, "limit": limit})).json()
        return {"results": [{**_memory(r["memory"]), "score": r["score"],
                             "flags": r["flags"]} for r in answer["results"]],
                "retractions": [r["about"] for r in answer["retractions"] if r["about"]]}

    @server.tool()
    async def correct(
        memory_id: Annotated[str, Field(description="The `id` of a memory recall returned.")],
        text: Annotated[str, Field(description="The corrected fact, whole.")],
    ) -> dict[str, Any]:
        """Replace a memory's text with a correction; the old text stays in its history."""
        current = await lethe.memory(memory_id)
        updated = await lethe.call("PATCH", memory_path(memory_id), body={"text": text},
                                   headers={"If-Match": current.headers["ETag"]})
        return {"memory": _memory(updated.json())}

    @server.tool()
    async def forget(
        memory_id: Annotated[str, Field(description="The `id` of a memory recall returned.")],
    ) -> dict[str, Any]:
        """Forget one memory for good: its content is destroyed and its source is not
        re-imported. Use when the user asks to forget that exact fact."""
        scoped = lethe.config.subject
        if scoped is not None:
            # Unscoped, forgetting a forgotten memory is done (DELETE answers 204 again). A
            # forgotten memory reads as absent to every key, whoever it was about, so a
            # scoped server cannot tell one of its subject's from another subject's or none:
            # it answers the three alike, so another subject's memories stay unseen.
            await lethe.memory(memory_id, absent=(
                f"Memory {memory_id} is not one of subject {scoped!r}'s memories now: it was "
                "forgotten already, or it does not exist or is about another subject. "
                "Nothing was changed."))
        await lethe.call("DELETE", memory_path(memory_id))
        return {"forgotten": memory_id}

    @server.tool()
    async def forget_about(
        description: Annotated[str, Field(description="What to forget, in the user's words, "
                                          "e.g. 'that I collect sneakers'.")],
        subject: SubjectArg = None,
    ) -> dict[str, Any]:
        """Forget everything remembered about a topic the user described: memories mostly
        about it are destroyed, others lose the sentences that mention it."""
        answer = (await lethe.call("POST", "/v1/forget", body={
            "subject": lethe.subject(subject), "about": description})).json()
        return {key: answer.get(key) for key in ("forgotten", "struck", "unresolved")}

    @server.tool()
    async def close_session(
        session: Annotated[str, Field(description="The run or conversation ID you gave "
                                      "`remember`.")],
    ) -> dict[str, Any]:
        """End a run: its `working` memories are forgotten, everything else it stored stays.
        Call it when the task or conversation is over."""
        path = f"/v1/sessions/{quote(session, safe='')}/close"
        if lethe.config.subject is not None:  # another subject's part of the run stays
            path += "?" + urlencode({"subject": lethe.config.subject})
        answer = (await lethe.call("POST", path)).json()
        return {key: answer.get(key) for key in ("session", "evicted", "kept")}

    return server


Transport = Literal["stdio", "http"]


def run(config: Config, *, transport: Transport, host: str, port: int) -> int:
    """Serve until the client hangs up (stdio) or the process is stopped (HTTP)."""
    server = build(config)
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)
    return 0
