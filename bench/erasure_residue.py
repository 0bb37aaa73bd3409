"""Where an erased subject's texts still lie on disk after the cascade (a script, not a test).

    .venv/bin/python bench/erasure_residue.py [--memories 200] [--rewrite]

Writes ``--memories`` memories of one subject through the API (each with a unique token, so
its lexeme can be told apart in the full-text index), checkpoints, erases the subject with
the real cascade and its VACUUM, checkpoints again, and then reads the data folder's raw
files: the heap and index files of `memory_version`, every other file of the database, and
the WAL segments. It prints how many of the texts (whole) and tokens (lexemes) it finds
where. With ``--rewrite`` it then runs `VACUUM FULL` on the touched tables (which writes new
files and unlinks the old ones) and scans again.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import psycopg

from bench.common import create_tenant, live_api, use_data_dir

SUBJECT = "residue:subject"
WORDS = ["heron", "violin", "orchard", "lantern", "glacier", "saffron", "harbour", "meadow"]


def texts(count: int) -> list[tuple[str, str]]:
    """(text, token) pairs; each token appears in one text only."""
    return [(f"Keeps a {WORDS[n % len(WORDS)]} named Quillon near marker{n:04d}x",
             f"marker{n:04d}x") for n in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--rewrite", action="store_true",
                        help="also VACUUM FULL the touched tables and scan again")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="lethe-erasure-residue-"))
    use_data_dir(data_dir)
    from app.core import migrations
    from app.core.runtime import get_runtime
    from app.erasure import cascade, tasks

    runtime = get_runtime()
    migrations.upgrade(runtime)
    tenant_id, key = create_tenant("Residue")
    written = texts(args.memories)
    try:
        with live_api(runtime) as base, httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=120) as api:
            print(f"writing {len(written)} memories…", flush=True)
            for text, _token in written:
                response = api.post("/v1/memories", json={"subject": SUBJECT, "text": text})
                assert response.status_code == 201, response.text
            with psycopg.connect(_libpq(runtime.owner_url), autocommit=True) as conn:
                conn.execute("CHECKPOINT")
                print("erasing…", flush=True)
                filed = api.post("/v1/erasure-requests", json={"subject": SUBJECT}).json()
                assert tasks.run(filed["id"], str(tenant_id)) == "completed"
                tasks.vacuum(filed["id"], str(tenant_id))
                conn.execute("CHECKPOINT")
                pgdata = Path(conn.execute("SHOW data_directory").fetchone()[0])  # type: ignore[index]
                rows = [("after the cascade and its VACUUM", scan(conn, pgdata, written))]
                if args.rewrite:
                    conn.execute("VACUUM FULL " + ", ".join(cascade.TOUCHED_TABLES))
                    conn.execute("CHECKPOINT")
                    rows.append(("after VACUUM FULL", scan(conn, pgdata, written)))
    finally:
        if runtime.embedded_server is not None:
            runtime.embedded_server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    n = len(written)
    print()
    print("| when | whole texts in the memory_version file | tokens in its index files "
          "| texts in any other file of the database | texts in the WAL |")
    print("|---|---|---|---|---|")
    for label, found in rows:
        print(f"| {label} | {found['heap']}/{n} | {found['index']}/{n} | {found['other']}/{n} "
              f"| {found['wal']}/{n} |")


def scan(conn: psycopg.Connection, pgdata: Path, written: list[tuple[str, str]]
         ) -> dict[str, int]:
    heap = _files(pgdata, [_path(conn, "SELECT pg_relation_filepath('memory_version')")])
    index_paths = [row[0] for row in conn.execute(
        "SELECT pg_relation_filepath(indexrelid) FROM pg_index"
        " WHERE indrelid = 'memory_version'::regclass")]
    indexes = _files(pgdata, index_paths)
    database = pgdata / Path(_path(conn, "SELECT pg_relation_filepath('memory_version')")).parent
    others = [path for path in database.iterdir() if path.is_file()
              and path not in heap and path not in indexes]
    wal = [path for path in (pgdata / "pg_wal").iterdir() if path.is_file()]
    blobs = {name: b"".join(path.read_bytes() for path in paths)
             for name, paths in (("heap", heap), ("index", indexes), ("other", others),
                                 ("wal", wal))}
    return {
        "heap": sum(text.encode() in blobs["heap"] for text, _ in written),
        "index": sum(token.encode() in blobs["index"] for _, token in written),
        "other": sum(text.encode() in blobs["other"] for text, _ in written),
        "wal": sum(text.encode() in blobs["wal"] for text, _ in written),
    }


def _path(conn: psycopg.Connection, query: str) -> str:
    row = conn.execute(query).fetchone()
    assert row is not None
    return str(row[0])


def _files(pgdata: Path, relative: Iterable[str]) -> list[Path]:
    """A relation's segment files (`N`, `N.1`, …), its free space and visibility maps."""
    found: list[Path] = []
    for name in relative:
        base = pgdata / name
        found += [path for path in base.parent.glob(base.name + "*")
                  if path.name == base.name or path.name[len(base.name)] in "._"]
    return found


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


if __name__ == "__main__":
    main()
