"""`lethe receipts verify`: check a signed compliance receipt offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

group = typer.Typer(help="work with signed compliance receipts", no_args_is_help=True)


@group.command("verify")
def verify(
    file: Annotated[Path, typer.Argument(help="a receipt (or an erasure request holding one)")],
    key: Annotated[str | None, typer.Option(
        help="the public JWK (a file, or its JSON) from GET /v1/receipts/public-key; "
        "default: this data folder's key")] = None,
) -> int:
    """Verify a receipt file offline; exit 0 when it verifies, 1 when not."""
    return verify_receipt(file, key)


def verify_receipt(path: Path, key: str | None) -> int:
    from app.receipts import offline

    verdict = offline.verify_file(path, key)
    print(f"{'OK' if verdict.ok else 'FAILED'}: {verdict.reason}", flush=True)
    return 0 if verdict.ok else 1


