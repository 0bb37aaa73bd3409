"""The unit of work commits once, then sends the jobs enqueued inside it, and only then."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import pytest
from fastapi import APIRouter
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials
from sqlalchemy import text

from app import main
from app.api import deps
from app.api import route as request_route
from app.core import uow
from app.core.jobs import enqueue_job
from app.invalidation import service as dependencies

TASK = "dependencies.invalidate"


def sent(owner_conn: Any, task: str, first_arg: str) -> int:
    """Messages for ``task`` whose first argument is ``first_arg`` that the broker holds."""
    if owner_conn.execute("SELECT to_regclass('kombu_message')").fetchone()[0] is None:
        return 0
    count = 0
    for (payload,) in owner_conn.execute("SELECT payload FROM kombu_message"):
        envelope = json.loads(payload)
        if envelope.get("headers", {}).get("task") != task:
            continue
        body = envelope["body"]
        if envelope.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body).decode()
        count += json.loads(body)[0][0] == first_arg
    return count


def _committed(owner_conn: Any, operation_id: uuid.UUID) -> bool:
    row = owner_conn.execute("SELECT 1 FROM operation WHERE id = %s", (operation_id,))
    return row.fetchone() is not None


def test_a_job_is_sent_after_its_unit_commits_and_not_before(
    tenant: dict[str, Any], owner_conn: Any
) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        _, operation = dependencies.put(session, tenant_id=tenant_id, key="v", value="1")
        assert operation is not None
        operation_id = operation.id
        assert sent(owner_conn, TASK, str(operation_id)) == 0
        assert not _committed(owner_conn, operation_id)
    assert _committed(owner_conn, operation_id)
    assert sent(owner_conn, TASK, str(operation_id)) == 1


def test_a_unit_that_rolls_back_sends_nothing(tenant: dict[str, Any], owner_conn: Any) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    accepted: list[uuid.UUID] = []
    with pytest.raises(RuntimeError, match="refused"), uow.unit_of_work(tenant_id) as session:
        _, operation = dependencies.put(session, tenant_id=tenant_id, key="v", value="1")
        assert operation is not None
        accepted.append(operation.id)
        raise RuntimeError("refused")
    assert not _committed(owner_conn, accepted[0])
    assert sent(owner_conn, TASK, str(accepted[0])) == 0


def test_a_nested_unit_sends_its_own_jobs_and_leaves_the_outer_ones(
    tenant: dict[str, Any], owner_conn: Any
) -> None:
    """A unit opened inside another (a refusal's audit trace, a prepare step's read) commits
    and sends on its own; what the outer unit enqueues waits for the outer commit."""
    tenant_id = uuid.UUID(tenant["id"])
    outer, inner = str(uuid.uuid4()), str(uuid.uuid4())
    with uow.unit_of_work(tenant_id):
        with uow.unit_of_work(tenant_id):
            enqueue_job(TASK, inner, tenant_id)
        assert sent(owner_conn, TASK, inner) == 1
        enqueue_job(TASK, outer, tenant_id)
        assert sent(owner_conn, TASK, outer) == 0
    assert sent(owner_conn, TASK, outer) == 1


def test_a_job_enqueued_outside_a_unit_is_refused() -> None:
    with pytest.raises(RuntimeError, match="outside a unit of work"):
        enqueue_job(TASK, str(uuid.uuid4()))


def test_the_maintenance_unit_lists_tenants_and_no_tenant_rows(
    client: Any, tenant: dict[str, Any], new_tenant: Any, owner_conn: Any
) -> None:
    other = new_tenant("Other")
    patched = client.patch("/v1/settings", json={"detect_forget_requests": True},
                           headers={**tenant["compliance"], "Idempotency-Key": "scope-1"})
    assert patched.status_code == 200
    with uow.unit_of_work(maintenance=True) as session:
        tenants = {str(row[0]) for row in session.execute(text("SELECT id FROM tenant"))}
        operations = session.execute(text("SELECT count(*) FROM operation")).scalar_one()
    assert {tenant["id"], other["id"]} <= tenants
    assert operations == 0
    assert owner_conn.execute("SELECT count(*) FROM operation").fetchone()[0] == 1


def test_a_request_transaction_opens_only_after_its_caller_is_identified() -> None:
    work = request_route.RequestWork()
    with pytest.raises(RuntimeError, match="identified"):
        work.open()


def test_every_route_opens_its_transaction_after_its_caller_and_prepare_step() -> None:
    """FastAPI resolves a route's dependencies in the order it lists them: whatever runs
    after the session dependency (which opens the transaction) must need the session, so no
    authentication, key claim or slow prepare step (embedding, a judge) runs inside it."""

    def needs_session(dependant: Any) -> bool:
        return dependant.call is deps.get_session or any(
            needs_session(sub) for sub in dependant.dependencies)

    checked = 0
    routers = [value for value in vars(main).values() if isinstance(value, APIRouter)]
    for route in (route for router in routers for route in router.routes):
        if not isinstance(route, APIRoute):
            continue
        listed = route.dependant.dependencies
        opened = next((i for i, d in enumerate(listed) if needs_session(d)), None)
        if opened is None:
            continue
        checked += 1
        late = [d.call.__name__ for d in listed[opened:]  # type: ignore[union-attr]
                if not needs_session(d)]
        assert late == [], f"{route.path}: {late} run after the transaction opened"
    assert checked > 20


def test_identifying_a_caller_marks_the_request_work(tenant: dict[str, Any]) -> None:
    work = request_route.RequestWork()
    raw = tenant["app"]["Authorization"].removeprefix("Bearer ")
    deps.identify(work, HTTPAuthorizationCredentials(scheme="Bearer", credentials=raw))
    assert work.identified and str(work.tenant_id) == tenant["id"]
