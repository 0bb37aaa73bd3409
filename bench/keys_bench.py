"""What the key store costs one operation: sealing and opening a memory-sized text, a term
hash, a data key from the process cache, from the store, created, destroyed, and a rotation.
No database: the store is a fresh folder (fsync on, as in production).

    .venv/bin/python bench/keys_bench.py                 # 2,000 subjects
    .venv/bin/python bench/keys_bench.py --subjects 10000
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from app.keys import digests

TEXT = "Prefers green tea in the morning and black coffee after lunch, never decaf. " * 2


def timed(action: Callable[[], object], repeat: int) -> float:
    """Median microseconds of ``action`` over ``repeat`` runs."""
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, default=2000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="lethe-keys-bench-"))
    os.environ["LETHE_KEY_STORE"] = str(folder / "keys")
    from app.core.config import get_settings
    from app.keys import subjects, tenant_keys
    from app.keys.configured import key_store

    get_settings.cache_clear()
    tenant = uuid.uuid4()
    tenant_keys.create_tenant_key(tenant)
    aad = subjects.row_aad("memory_version", uuid.uuid4(), "text")
    names = [f"user-{n}@example.com" for n in range(args.subjects)]

    created = [timed(functools.partial(subjects.subject_key, tenant, name), 1) for name in names]
    key = subjects.subject_key(tenant, digests.subject_digest(tenant, names[0]))
    sealed = subjects.seal_text(key, TEXT, aad=aad)
    rows = {
        f"seal {len(TEXT)} chars": timed(lambda: subjects.seal_text(key, TEXT, aad=aad), 5000),
        f"open {len(TEXT)} chars": timed(lambda: subjects.open_text(key, sealed, aad=aad), 5000),
        "term hash": timed(lambda: key.term("coffee"), 5000),
        "key from the process cache": timed(lambda: subjects.subject_key(
            tenant, digests.subject_digest(tenant, names[0])),
                                            5000),
    }

    def from_store() -> None:
        subjects.forget_cached()
        subjects.subject_key(tenant, digests.subject_digest(tenant, names[1]))

    rows["key from the store (cache dropped)"] = timed(from_store, 500)
    rows["key created (first use)"] = statistics.median(created)
    destroyed = [timed(functools.partial(subjects.destroy_subject_key, tenant, name), 1)
                 for name in names[: min(200, len(names))]]
    rows["key destroyed"] = statistics.median(destroyed)
    started = time.perf_counter()
    step = key_store().rotate(lambda _step: None)
    rows[f"rotation of {step.total} keys (total)"] = (time.perf_counter() - started) * 1e6
    print("| operation | median |\n|---|---|")
    for name, micros in rows.items():
        shown = f"{micros / 1000:.2f} ms" if micros >= 1000 else f"{micros:.1f} µs"
        print(f"| {name} | {shown} |")


if __name__ == "__main__":
    main()
