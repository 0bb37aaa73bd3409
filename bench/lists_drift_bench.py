"""The lists index on a drifting table (a script, not a test): recall@10 of a large subject's
walk as memories on new topics arrive after the index was built.

    .venv/bin/python bench/lists_drift_bench.py --data-dir COPY [--steps 5000,10000]

COPY: a copy of a folder seeded by `bench/recall_bench.py --seed-only`; this script changes
it for good. It merges seeded subjects into one of `--size` memories, builds the lists index
as beat would, then gives memories of that subject new versions on topics the seeding never
wrote (training for a race, supplements, savings…), by COPY, moving `updated_at` as the
write path does, and measures after each step of `--steps` new versions. Finally it builds
the index again and measures once more. Each measurement, for 12 questions on the seeded
topics and 10 on the new ones: recall@10 against the exact sort of the walk alone (the lists
index's walk, nothing sorted beside it) and of recall's list (the walk, plus the memories
changed since the build sorted beside it: `candidates._LISTS_WALK_SQL`), and their p50 times
beside the sort's.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg

from bench.common import percentile, use_data_dir, vector_literal
from bench.recall_bench import _merged_subjects
from bench.synthetic import QUERIES, _slots

NEW_TEMPLATES = [
    "Is training for a half marathon in {city} and runs {n} km on {day}s.",
    "Takes {n} mg of vitamin D each morning on their doctor's advice.",
    "Is saving for a flat and puts away {n}00 euros a month.",
    "Listens to jazz podcasts on the commute, about {n} episodes a week.",
    "Is renovating the kitchen; the builders come back on {day}.",
    "Volunteers at a food bank in {city} every {n} weeks.",
    "Reads science fiction, lately {n} novels a month, mostly on an e-reader.",
    "Is studying for a pilot's licence with {n} flight hours logged.",
    "Plays the cello in a community orchestra that rehearses on {day}s.",
    "Has a mortgage review with the bank in {n} weeks.",
]
NEW_QUERIES = [
    "are they into running or sport?", "do they take any supplements?",
    "what are they saving money for?", "what do they listen to?",
    "is any building work going on at home?", "do they do charity work?",
    "what kind of books do they read?", "are they learning to fly?",
    "do they play an instrument?", "any appointments with the bank?",
]
CHUNK = 2_500


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--size", type=int, default=50_000, help="memories in the subject")
    parser.add_argument("--steps", default="5000,10000",
                        help="new versions after which to measure (multiples of 2,500)")
    args = parser.parse_args()
    steps = sorted(int(step) for step in args.steps.split(","))
    state_file = args.data_dir / "bench.json"
    if not state_file.exists():
        sys.exit(f"{args.data_dir} holds no seeded benchmark (bench/recall_bench.py --seed-only)")
    use_data_dir(args.data_dir)
    from app.core import migrations
    from app.core.runtime import get_runtime
    from app.embeddings.runtime import embedder

    runtime = get_runtime()
    migrations.upgrade(runtime)
    owner = runtime.owner_url.replace("postgresql+psycopg://", "postgresql://")
    tenant_id = uuid.UUID(json.loads(state_file.read_text())["tenant_id"])
    model = embedder()
    vectors = {query: model.embed_one(query) for query in QUERIES + NEW_QUERIES}
    subject = f"large:{args.size}"
    try:
        with psycopg.connect(owner, autocommit=True) as conn:
            per_subject = _dated_before_today(conn, tenant_id)
        # The merge is undone at the end; the new versions stay.
        with _merged_subjects(owner, tenant_id, per_subject, [args.size]):
            rows = _drift(owner, tenant_id, subject, steps, vectors, model)
    finally:
        if runtime.embedded_server is not None:
            runtime.embedded_server.stop()
    print(f"\n| subject of {args.size:,} | old topics: walk alone / recall's list"
          " | new topics: walk alone / recall's list | p50 ms: walk alone / recall's list / sort |")
    print("|---|---|---|---|")
    for row in rows:
        print("| {} | {:.3f} / {:.3f} | {:.3f} / {:.3f} | {:.1f} / {:.1f} / {:.1f} |".format(*row))


def _drift(owner: str, tenant_id: uuid.UUID, subject: str, steps: list[int],
           vectors: dict[str, list[float]], model: Any) -> list[tuple[Any, ...]]:
    """Build, measure, write new versions measuring after each step, build again, measure."""
    from app.recall import vector_lists

    with psycopg.connect(owner, autocommit=True) as conn:
        # Built now, over the table as seeded (a build by hand or by an earlier release has
        # no record of its time and would be built again anyway).
        conn.execute(f"DROP INDEX IF EXISTS {vector_lists.INDEX}")
        print(f"lists index built: {vector_lists.ensure(conn)}", flush=True)
    rows = [_measure(owner, subject, vectors, "at the build")]
    written = 0
    rng = random.Random(5)
    with psycopg.connect(owner) as conn:
        ids = [row[0] for row in conn.execute(
            "SELECT id FROM memory WHERE subject = %s ORDER BY id", (subject,))]
        chosen = rng.sample(ids, min(steps[-1], len(ids)))
        while written < len(chosen):
            _new_versions(conn, tenant_id, chosen[written:written + CHUNK], rng, model)
            written += len(chosen[written:written + CHUNK])
            print(f"  {written:,} new versions", end="\r", flush=True)
            if written in steps:
                conn.execute("ANALYZE memory")
                conn.execute("ANALYZE memory_version")
                conn.commit()
                rows.append(_measure(owner, subject, vectors, f"+{written:,} versions"))
    with psycopg.connect(owner, autocommit=True) as conn:
        conn.execute(f"DROP INDEX {vector_lists.INDEX}")
        print(f"\nlists index built again: {vector_lists.ensure(conn)}", flush=True)
    rows.append(_measure(owner, subject, vectors, f"+{written:,}, index built again"))
    return rows


def _dated_before_today(conn: psycopg.Connection[Any], tenant_id: uuid.UUID) -> int:
    """Every memory written a day ago or earlier (a folder seeded before the seeding stamped a
    history has them all stamped at the seeding, which would put them all among the changed
    once the index is built); the seeded memories a subject."""
    conn.execute("UPDATE memory SET updated_at = now() - interval '1 day'"
                 " WHERE updated_at > now() - interval '1 day'")
    per_subject = conn.execute(
        "SELECT count(*) FROM memory WHERE tenant_id = %s AND subject = 'user:00000'",
        (tenant_id,)).fetchone()
    assert per_subject is not None and per_subject[0] > 0, "no seeded subjects"
    return int(per_subject[0])


def _new_versions(conn: psycopg.Connection[Any], tenant_id: uuid.UUID, memory_ids: list[uuid.UUID],
                  rng: random.Random, model: Any) -> None:
    """A new current version for each memory, on the new topics (three facts each), as the
    write path leaves it: version appended, pointer and revision moved, `updated_at` now."""
    texts = [" ".join(NEW_TEMPLATES[(index + offset) % len(NEW_TEMPLATES)].format(**_slots(rng))
                      for offset in (0, 3, 7)) for index in range(len(memory_ids))]
    embedded = model.embed(texts)
    versions = [(uuid.uuid4(), memory_id, text, vector)
                for memory_id, text, vector in zip(memory_ids, texts, embedded, strict=True)]
    now = datetime.now(UTC)
    with conn.cursor() as cur:
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS moved (memory_id uuid, version_id uuid)")
        cur.execute("TRUNCATE moved")
        with cur.copy("COPY memory_version (id, tenant_id, memory_id, seq, text, embedding,"
                      " created_at) FROM STDIN") as copy:
            for version_id, memory_id, text, vector in versions:
                copy.write_row((version_id, tenant_id, memory_id, 2, text, vector_literal(vector),
                                now))
        with cur.copy("COPY moved FROM STDIN") as copy:
            for version_id, memory_id, _, _ in versions:
                copy.write_row((memory_id, version_id))
        cur.execute("UPDATE memory m SET current_version_id = moved.version_id,"
                    " revision = m.revision + 1, updated_at = %s FROM moved"
                    " WHERE m.id = moved.memory_id", (now,))
    conn.commit()


def _measure(owner: str, subject: str, vectors: dict[str, list[float]],
             label: str) -> tuple[Any, ...]:
    """Recall@10 of the walk alone and of recall's list, old and new topics; p50 times."""
    from app.recall import candidates

    found: dict[str, list[float]] = {"alone": [], "recall": []}
    times: dict[str, list[float]] = {"alone": [], "recall": [], "sort": []}
    with psycopg.connect(owner, prepare_threshold=None) as conn:
        for name, value in candidates.walk_settings().items():
            conn.execute("SELECT set_config(%s, %s, true)", (name, value))
        params = {"subject": subject, "states": ["active"], "n": 40, "now": datetime.now(UTC)}
        size = candidates.send_size(conn, subject=subject, states=["active"]).result()
        lists_index = size.lists_index
        assert size.walks() and lists_index is not None, f"{subject} is not walked: {size}"
        conn.execute("SELECT set_config('ivfflat.probes', %s, true)",
                     (str(candidates.probes(lists_index.lists, size.memories)),))
        never = datetime.now(UTC) + timedelta(days=365)
        for query in QUERIES + NEW_QUERIES:
            ask = {**params, "embedding": vector_literal(vectors[query])}
            started = time.perf_counter()
            exact = [row[0] for row in conn.execute(candidates._EXACT_VECTOR_SQL, ask)][:10]
            times["sort"].append((time.perf_counter() - started) * 1000)
            for way, since in (("alone", never), ("recall", lists_index.since)):
                started = time.perf_counter()
                walked = [row[0] for row in conn.execute(
                    candidates._LISTS_WALK_SQL, {**ask, "since": since}, prepare=False)][:10]
                times[way].append((time.perf_counter() - started) * 1000)
                found[way].append(len(set(walked) & set(exact)) / max(1, len(exact)))
        conn.rollback()
    old = len(QUERIES)

    def share(way: str, part: slice) -> float:
        return sum(found[way][part]) / len(found[way][part])

    row = (label, share("alone", slice(0, old)), share("recall", slice(0, old)),
           share("alone", slice(old, None)), share("recall", slice(old, None)),
           percentile(times["alone"], 50), percentile(times["recall"], 50),
           percentile(times["sort"], 50))
    print("  {}: old {:.3f} / {:.3f}, new {:.3f} / {:.3f}; {:.1f} / {:.1f} / {:.1f} ms".format(
        *row), flush=True)
    return row


if __name__ == "__main__":
    main()
