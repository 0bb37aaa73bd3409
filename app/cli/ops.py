"""`lethe openapi` and `lethe vector-lists`: the API document and the recall index."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def register(cli: typer.Typer) -> None:
    @cli.command("openapi")
    def openapi(output: Annotated[Path, typer.Option()] = Path("openapi/openapi.json")) -> int:
        """Write the OpenAPI document."""
        return write_openapi(output)

    @cli.command("vector-lists")
    def vector_lists_command() -> int:
        """Build the IVFFlat index large subjects' recall walks, if the table's size calls
        for it (beat checks hourly)."""
        return vector_lists()


def vector_lists() -> int:
    from app.core import db
    from app.recall import vector_lists

    print("lethe: checking the vector lists index (a build takes seconds per 100,000 "
          "versions)…", flush=True)
    with db.autocommit(owner=True) as conn:
        driver = db.driver_connection(conn)
        built = vector_lists.ensure(driver)
        lists = vector_lists.current_lists(driver)
    if built is not None:
        why = {"new": "there was none", "size": f"it had {built.replaced} lists",
               "churn": "a tenth as many versions were written since it was built as it held"}
        print(f"lethe: built with {built.lists} lists over {built.versions:,} versions"
              f" ({why.get(built.reason, built.reason)})", flush=True)
    elif lists is None:
        print(f"lethe: no index: fewer than {vector_lists.min_versions():,} versions, or "
              "another process is building it", flush=True)
    else:
        print(f"lethe: the index has {lists} lists, which suits the table", flush=True)
    return 0


def write_openapi(output: Path) -> int:
    from app.main import create_app

    document = create_app().openapi()
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    print(f"lethe: wrote {output}", flush=True)
    return 0


