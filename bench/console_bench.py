"""Console page latency on the embedded PostgreSQL (a script, not a test).

    .venv/bin/python bench/console_bench.py [--events 20000] [--requests 20]

Signs a staff member in through the real form (Argon2 and the throttle included), then times
the dashboard (its first load verifies the whole audit chain; later ones only what was
appended since), the audit log, settings and staff pages against a tenant whose chain holds
`--events` events.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from bench.common import create_tenant, live_api, percentile, use_data_dir

PASSWORD = "bench password, long enough"
BATCH = 1000


def _seed(tenant_id: object, events: int) -> str:
    """A staff officer and ``events`` audit events (a third of them state changes)."""
    import uuid

    from app.audit import service as audit
    from app.core import uow
    from app.staff import service as staff
    from app.staff.models import StaffRole

    assert isinstance(tenant_id, uuid.UUID)
    prepared = staff.prepare_password(PASSWORD)
    with uow.unit_of_work(tenant_id) as session:
        member = staff.create(session, tenant_id=tenant_id, email="dpo@bench.example",
                              role=StaffRole.officer, prepared=prepared, actor="admin")
    for start in range(0, events, BATCH):
        with uow.unit_of_work(tenant_id) as session:
            for n in range(start, min(start + BATCH, events)):
                moved = n % 3 == 0
                audit.record(session, tenant_id=tenant_id, actor="system:bench",
                             action="memory.transition" if moved else "bench.noted",
                             target_kind="memory", target_id=str(uuid.uuid4()),
                             from_state="active" if moved else None,
                             to_state="quarantined" if moved else None, flush=False)
    return member.email


def _timed(client: httpx.Client, path: str, count: int) -> list[float]:
    took = []
    for _ in range(count):
        started = time.perf_counter()
        response = client.get(path)
        took.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (path, response.status_code)
    return took


def _line(name: str, values: list[float]) -> str:
    return (f"{name:<22} p50 {statistics.median(values):8.1f} ms   "
            f"p95 {percentile(values, 95):8.1f} ms   n={len(values)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=20_000, help="audit events to seed")
    parser.add_argument("--requests", type=int, default=20, help="requests per page")
    parser.add_argument("--sign-ins", type=int, default=5)
    args = parser.parse_args()

    use_data_dir(Path(tempfile.mkdtemp(prefix="lethe-console-bench-")))
    from app.core import migrations
    from app.core.runtime import get_runtime

    runtime = get_runtime()
    migrations.upgrade(runtime)
    tenant_id, _ = create_tenant("Console bench")
    print(f"seeding {args.events} audit events…", flush=True)
    email = _seed(tenant_id, args.events)
    with live_api(runtime) as base, httpx.Client(base_url=base, timeout=120) as client:
        sign_in_ms = []
        for _ in range(args.sign_ins):
            client.cookies.clear()
            page = client.get("/console/login").text
            token = re.search(r'name="csrf_token" value="([^"]+)"', page)
            assert token
            started = time.perf_counter()
            response = client.post("/console/login", data={
                "email": email, "password": PASSWORD, "csrf_token": token.group(1)})
            sign_in_ms.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 303, response.text
        print(_line("sign-in (Argon2)", sign_in_ms))
        print(_line("dashboard, first", _timed(client, "/console/", 1)) + "  (full chain pass)")
        for name, path in (("dashboard", "/console/"), ("audit log", "/console/audit"),
                           ("audit log, filtered", "/console/audit?action=memory"),
                           ("settings", "/console/settings"), ("staff", "/console/staff")):
            print(_line(name, _timed(client, path, args.requests)), flush=True)
    print(f"audit chain: {args.events + 2} events; pages after the first check only the "
          "events appended since the last full pass")


if __name__ == "__main__":
    main()
