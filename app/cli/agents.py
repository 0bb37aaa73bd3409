"""`lethe mcp`: Lethe's memory as MCP tools for an agent (app/mcp/server.py)."""

from __future__ import annotations

import enum
from typing import Annotated

import typer


class Transport(enum.StrEnum):
    stdio = "stdio"
    http = "http"


def register(cli: typer.Typer) -> None:
    @cli.command("mcp")
    def mcp(
        transport: Annotated[Transport, typer.Option(
            help="stdio (the client starts this command) or http (streamable HTTP at /mcp)",
        )] = Transport.stdio,
        host: Annotated[str, typer.Option(help="with --transport http")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="with --transport http")] = 8765,
        subject: Annotated[str | None, typer.Option(
            help="scope every tool to this subject")] = None,
    ) -> int:
        """Serve Lethe's memory as MCP tools over its HTTP API (LETHE_URL, LETHE_API_KEY)."""
        # A client of the API: no database, no runtime of its own.
        from app.mcp import server

        return server.run(server.Config.from_environment(subject),
                          transport="http" if transport is Transport.http else "stdio",
                          host=host, port=port)
