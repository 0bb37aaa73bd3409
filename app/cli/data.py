"""`lethe import FILE.jsonl` and `lethe export --subject`: a tenant's memories in and out.

Import format: one JSON object a line, each a `POST /v1/memories` body (`subject`, `text`,
and any optional field). Each line is sent with an Idempotency-Key derived from its number
and content, so a rerun after an interruption replays the lines that landed (the server
answers them from its record, storing nothing twice) and sends the rest. The lines of a
batch are sent concurrently; a later `/v1/memories/batch` can take a batch in one request.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli.arguments import Tenant, tenant_id_or_exit


@dataclass
class Tally:
    stored: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)


def line_key(number: int, line: str) -> str:
    """The Idempotency-Key of an import line: the same line at the same place, the same key."""
    digest = hashlib.sha256(line.strip().encode()).hexdigest()[:32]
    return f"lethe-import-{number}-{digest}"


def register(cli: typer.Typer) -> None:
    @cli.command("import")
    def import_file(
        file: Annotated[Path, typer.Argument(help="JSON lines, each a POST /v1/memories body")],
        url: Annotated[str, typer.Option(envvar="LETHE_URL")] = "http://127.0.0.1:8000",
        api_key: Annotated[str, typer.Option(envvar="LETHE_API_KEY",
                                             help="the tenant's app key")] = "",
        batch_size: Annotated[int, typer.Option(min=1, max=100)] = 20,
    ) -> int:
        """Import memories through the API, batched, resumable; exit 1 if a line failed."""
        if not api_key:
            print("lethe: --api-key (or LETHE_API_KEY) is required", file=sys.stderr)
            return 2
        lines = [(n, line) for n, line in enumerate(file.read_text().splitlines(), 1)
                 if line.strip()]
        tally = asyncio.run(_send(url, api_key, lines, batch_size))
        for failure in tally.failed:
            print(f"lethe: {failure}", file=sys.stderr)
        print(f"lethe: {tally.stored} stored, {tally.skipped} already there, "
              f"{len(tally.failed)} failed", flush=True)
        return 1 if tally.failed else 0

    @cli.command("export")
    def export_subject(
        subject: Annotated[str, typer.Option(help="whose data")],
        tenant: Tenant,
        output: Annotated[Path | None, typer.Option(help="a file; default: stdout")] = None,
    ) -> int:
        """Everything held about a subject, in the access-request export format."""
        return write_export(tenant, subject, output)


async def _send(url: str, api_key: str, lines: list[tuple[int, str]],
                batch_size: int) -> Tally:
    from rich.progress import Progress

    from lethe_client import AsyncLethe, LetheError, MemoryWritten

    tally = Tally()

    async def one(lethe: AsyncLethe, number: int, line: str) -> None:
        try:
            body: dict[str, Any] = json.loads(line)
            subject, text = body.pop("subject"), body.pop("text")
            written = await lethe.memories.create(subject, text, **body,
                                                  idempotency_key=line_key(number, line))
        except (ValueError, KeyError, TypeError) as error:
            tally.failed.append(f"line {number}: not a memory body ({error})")
        except LetheError as error:
            tally.failed.append(f"line {number}: {error.status} {error.detail}")
        else:
            replayed = written.replayed if isinstance(written, MemoryWritten) else False
            if replayed:
                tally.skipped += 1
            else:
                tally.stored += 1

    async with AsyncLethe(url, api_key) as lethe:
        with Progress(transient=not sys.stderr.isatty()) as progress:
            task = progress.add_task("importing", total=len(lines))
            for start in range(0, len(lines), batch_size):
                batch = lines[start:start + batch_size]
                await asyncio.gather(*(one(lethe, n, line) for n, line in batch))
                progress.advance(task, len(batch))
    return tally


def write_export(tenant: str, subject: str, output: Path | None) -> int:
    import uuid

    from app.access import export
    from app.access import service as access
    from app.core import uow

    tenant_id = tenant_id_or_exit(tenant)
    with uow.unit_of_work(tenant_id) as session:
        document = export.build(session, tenant_id=tenant_id, subject=subject,
                                request_id=uuid.uuid4(), now=datetime.now(UTC))
    content = access.export_file(document.model_dump(mode="json"))
    if output is None:
        sys.stdout.buffer.write(content)
    else:
        output.write_bytes(content)
        print(f"lethe: wrote {output} ({document.counts.memories} memories)", file=sys.stderr)
    return 0
