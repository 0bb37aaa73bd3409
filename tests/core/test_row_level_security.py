"""Row-level security binds the application role, whatever the code forgets."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import ProgrammingError
from sqlmodel import Session, select

from app.core import db, uow
from app.core.runtime import get_runtime
from app.idempotency.models import Operation, OperationStatus
from app.tenants.models import ApiKey, Tenant


def _tenant_tables(owner_conn: Any) -> list[str]:
    rows = owner_conn.execute(
        "SELECT DISTINCT table_name FROM information_schema.columns "
        "WHERE table_schema = 'public' AND column_name = 'tenant_id'"
    ).fetchall()
    return [*sorted(r[0] for r in rows), "tenant"]


def test_every_tenant_owned_table_forces_row_level_security(owner_conn: Any) -> None:
    tables = _tenant_tables(owner_conn)
    assert {"api_key", "operation", "tenant_settings", "tenant"} <= set(tables)
    for table in tables:
        enabled, forced = owner_conn.execute(
            "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = %s",
            (table,),
        ).fetchone()
        assert enabled and forced, table


def test_application_role_is_neither_owner_superuser_nor_bypassrls(owner_conn: Any) -> None:
    role = get_runtime().app_role
    superuser, bypass = owner_conn.execute(
        "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = %s", (role,)
    ).fetchone()
    assert not superuser and not bypass
    owned = owner_conn.execute(
        "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tableowner = %s", (role,)
    ).fetchone()[0]
    assert owned == 0
    with Session(db.app_engine()) as session:
        assert session.execute(text("SELECT current_user")).scalar() == role


def test_no_tenant_set_sees_no_rows(tenant: dict[str, Any], owner_conn: Any) -> None:
    assert owner_conn.execute("SELECT count(*) FROM api_key").fetchone()[0] == 2
    with uow.unit_of_work() as session:
        for table in ("api_key", "tenant", "tenant_settings", "operation"):
            assert session.execute(text(f"SELECT count(*) FROM {table}")).scalar() == 0


def test_query_without_tenant_filter_sees_only_own_tenant(
    tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    with uow.unit_of_work(uuid.UUID(tenant["id"])) as session:
        keys = session.exec(select(ApiKey)).all()  # deliberately no tenant filter
        tenants = session.exec(select(Tenant)).all()
    assert {str(k.tenant_id) for k in keys} == {tenant["id"]}
    assert [str(t.id) for t in tenants] == [tenant["id"]]


def test_writing_into_another_tenant_is_refused(
    tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    with pytest.raises(ProgrammingError, match="row-level security"), uow.unit_of_work(
        uuid.UUID(tenant["id"])
    ) as session:
            session.add(
                Operation(
                    tenant_id=uuid.UUID(other_tenant["id"]), kind="x", request_method="POST",
                    request_path="/", request_digest="0" * 64, status=OperationStatus.succeeded,
                )
            )
            session.flush()


def test_pool_of_one_never_leaks_tenant_between_transactions(
    tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    engine = db.make_engine(get_runtime().app_url, pool_size=1)
    try:
        ids = [uuid.UUID(tenant["id"]), uuid.UUID(other_tenant["id"])]
        backend_pids = set()
        for round_ in range(40):
            tenant_id = ids[round_ % 2]
            with uow.unit_of_work(tenant_id, engine=engine) as session:
                backend_pids.add(session.execute(text("SELECT pg_backend_pid()")).scalar())
                seen = {k.tenant_id for k in session.exec(select(ApiKey)).all()}
                assert seen == {tenant_id}
            # The next transaction on the same connection names no tenant: it sees nothing.
            with uow.unit_of_work(engine=engine) as session:
                assert session.execute(text("SELECT count(*) FROM api_key")).scalar() == 0
        # A transaction that failed after setting a tenant leaves nothing behind either.
        with pytest.raises(RuntimeError), uow.unit_of_work(ids[0], engine=engine):
            raise RuntimeError("boom")
        with uow.unit_of_work(engine=engine) as session:
            assert session.execute(text("SELECT count(*) FROM api_key")).scalar() == 0
        assert len(backend_pids) == 1  # really one pooled connection throughout
    finally:
        engine.dispose()


def test_api_never_shows_another_tenants_settings(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    client.patch("/v1/settings", json={"half_lives": {"situational": 1.5}},
                 headers=tenant["compliance"])
    theirs = client.get("/v1/settings", headers=other_tenant["app"]).json()
    assert theirs["half_lives"]["situational"] == 7


def test_key_lookup_reads_one_key_and_leaves_no_setting_behind(
    tenant: dict[str, Any], other_tenant: dict[str, Any], owner_conn: Any
) -> None:
    # What the API runs before every request: one autocommit statement on a pooled connection.
    from app.tenants import service as tenants

    engine = db.make_engine(get_runtime().app_url, pool_size=1)
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            found = tenants.authenticate_alone(conn, raw_key=tenant["keys"]["app"])
            assert found is not None and str(found.tenant_id) == tenant["id"]
            assert found.role.value == "app"
            # The hash named for the lookup ended with its statement: nothing readable after.
            assert conn.execute(text("SELECT count(*) FROM api_key")).scalar() == 0
            assert conn.execute(
                text("SELECT current_setting('lethe.auth_key_hash', true)")
            ).scalar() in (None, "")
            assert tenants.authenticate_alone(conn, raw_key="lethe_app_unknown") is None
        owner_conn.execute("UPDATE api_key SET revoked_at = now() WHERE tenant_id = %s",
                           (other_tenant["id"],))
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            assert tenants.authenticate_alone(conn, raw_key=other_tenant["keys"]["app"]) is None
        # The same pooled connection, back in a transaction, still sees no key rows.
        with uow.unit_of_work(engine=engine) as session:
            assert session.execute(text("SELECT count(*) FROM api_key")).scalar() == 0
    finally:
        engine.dispose()


def test_console_sign_in_scopes_the_transaction_to_the_keys_tenant(
    tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    from app.tenants import service as tenants

    with uow.unit_of_work() as session:
        found = tenants.authenticate(session, raw_key=tenant["keys"]["compliance"])
        assert found is not None and str(found.tenant_id) == tenant["id"]
        seen = {str(k.tenant_id) for k in session.exec(select(ApiKey)).all()}
        assert seen == {tenant["id"]}
        # The key row is no longer readable by its hash alone: only by tenant.
        assert session.execute(
            text("SELECT current_setting('lethe.auth_key_hash', true)")
        ).scalar() == ""
