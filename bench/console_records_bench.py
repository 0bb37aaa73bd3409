"""Console record pages benchmark on the embedded PostgreSQL (a script, not a test).

    .venv/bin/python bench/console_records_bench.py [--requests 50] [--versions 50]

Seeds one tenant through the API: a subject of `--subject-size` memories, one memory with
`--versions` versions, `--children` derived memories and as many artifacts, `--quarantined`
quarantined memories and `--holds` legal holds; then times each record page (GET, signed in)
through one `lethe api` process and prints p50 / p95 per page.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from bench.common import live_api, percentile, use_data_dir
from bench.synthetic import memory_texts

SUBJECT = "user:bench"


def _tenant() -> tuple[str, str]:
    """App and compliance keys of a new tenant."""
    from app.core import uow
    from app.tenants import service
    from app.tenants.models import Role

    with uow.unit_of_work() as session:
        created = service.create_tenant(session, name="Console records bench")
    assert created.keys is not None
    return created.keys[Role.app], created.keys[Role.compliance]


def _sign_in(base: str, compliance_key: str) -> httpx.Client:
    """A client signed in to the console (the one place that knows how staff sign in)."""
    client = httpx.Client(base_url=base, timeout=120)
    response = client.post("/console/login", data={"key": compliance_key})
    assert response.status_code in (200, 303), response.text
    return client


def _seed(app: httpx.Client, compliance: httpx.Client, args: argparse.Namespace) -> str:
    texts = list(memory_texts(args.subject_size))
    ids = []
    for text in texts:
        response = app.post("/v1/memories", json={"subject": SUBJECT, "text": text})
        assert response.status_code in (200, 201), response.text
        ids.append(response.json()["id"])
    focus = ids[0]
    for n in range(args.versions - 1):
        current = app.get(f"/v1/memories/{focus}")
        response = app.patch(f"/v1/memories/{focus}", json={"text": f"{texts[0]} (edit {n})"},
                             headers={"If-Match": current.headers["etag"]})
        assert response.status_code == 200, response.text
    for n in range(args.children):
        app.post("/v1/memories", json={"subject": "user:derived", "text": f"Summary {n}",
                                       "derived_from": [focus]})
        app.post("/v1/artifacts", json={"kind": "row", "ref": f"crm:{n}",
                                        "derived_from": [focus]})
    for memory_id in ids[1:1 + args.quarantined]:
        assert compliance.post(f"/v1/memories/{memory_id}/quarantine").status_code == 200
    for n in range(args.holds):
        compliance.post("/v1/legal-holds", json={"source": f"ticket:{n}", "reason": "bench"})
    compliance.post("/v1/erasure-requests", json={"subject": "user:gone"})
    return focus


def _time(console: httpx.Client, path: str, requests: int) -> list[float]:
    timings = []
    for _ in range(requests):
        started = time.perf_counter()
        response = console.get(path)
        timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (path, response.status_code)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--subject-size", type=int, default=500)
    parser.add_argument("--versions", type=int, default=50)
    parser.add_argument("--children", type=int, default=30)
    parser.add_argument("--quarantined", type=int, default=50)
    parser.add_argument("--holds", type=int, default=25)
    args = parser.parse_args()

    use_data_dir(Path(tempfile.mkdtemp(prefix="lethe-console-records-bench-")))
    from app.core import migrations
    from app.core.runtime import get_runtime

    runtime = get_runtime()
    migrations.upgrade(runtime)
    app_key, compliance_key = _tenant()
    with live_api(runtime) as base, \
            httpx.Client(base_url=base, timeout=120,
                         headers={"Authorization": f"Bearer {app_key}"}) as app, \
            httpx.Client(base_url=base, timeout=120,
                         headers={"Authorization": f"Bearer {compliance_key}"}) as compliance:
        print("seeding…", flush=True)
        focus = _seed(app, compliance, args)
        console = _sign_in(base, compliance_key)
        pages = {
            f"lineage ({args.versions} versions, {2 * args.children} children)":
                f"/console/memories/{focus}",
            f"search: subject ({args.subject_size} memories), first page":
                f"/console/memories?subject={SUBJECT}",
            "search: subject + text (recall)":
                f"/console/memories?subject={SUBJECT}&q=coffee+in+the+morning",
            f"quarantine ({args.quarantined} rows)": "/console/quarantine",
            f"legal holds ({args.holds} active, with counts)": "/console/holds",
            "erasure requests": "/console/erasures",
        }
        print(f"| page ({args.requests} GETs each) | p50 ms | p95 ms |")
        print("|---|---|---|")
        for name, path in pages.items():
            _time(console, path, 3)  # warm-up
            timings = _time(console, path, args.requests)
            print(f"| {name} | {percentile(timings, 50):.1f} | {percentile(timings, 95):.1f} |",
                  flush=True)
        console.close()


if __name__ == "__main__":
    main()
