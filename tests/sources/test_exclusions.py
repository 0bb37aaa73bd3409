"""Source exclusions: refusals that store nothing and leave an audit trace."""

from __future__ import annotations

from typing import Any

from tests.forgetting.dump import database_text


def test_excluded_source_refuses_writes_and_stores_nothing(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    created = client.post("/v1/sources/exclusions",
                          json={"source": "ticket:123", "reason": "user request"},
                          headers=tenant["app"])
    assert created.status_code == 201
    again = client.post("/v1/sources/exclusions", json={"source": "ticket:123"},
                        headers=tenant["app"])
    assert again.status_code == 200 and again.json()["id"] == created.json()["id"]
    refused = client.post("/v1/memories", json={"subject": "u", "text": "Zanzibar plans",
                                                 "source": "ticket:123"},
                          headers=tenant["app"])
    assert refused.status_code == 409
    assert refused.json()["type"] == "https://lethe.dev/problems/source-excluded"
    assert owner_conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 0
    assert "Zanzibar" not in database_text(owner_conn)
    trace = client.get("/v1/audit?source=ticket:123", headers=tenant["compliance"]).json()
    assert [e["action"] for e in trace["data"]] == ["source.excluded", "write.refused"]
    # The trail names the source by its keyed digest only: it outlives erasures.
    assert all(e["target_id"] != "ticket:123" for e in trace["data"])


def test_exclusions_are_listed_and_readmitted_by_compliance_only(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any]
) -> None:
    ids = [client.post("/v1/sources/exclusions", json={"source": f"s:{i}"},
                       headers=tenant["app"]).json()["id"] for i in range(3)]
    page = client.get("/v1/sources/exclusions?limit=2", headers=tenant["app"]).json()
    assert [e["id"] for e in page["data"]] == ids[:2] and page["next_cursor"]
    rest = client.get(f"/v1/sources/exclusions?limit=2&cursor={page['next_cursor']}",
                      headers=tenant["app"]).json()
    assert [e["id"] for e in rest["data"]] == ids[2:] and rest["next_cursor"] is None
    assert client.get("/v1/sources/exclusions", headers=other_tenant["app"]).json()["data"] == []
    assert client.delete(f"/v1/sources/exclusions/{ids[0]}",
                         headers=tenant["app"]).status_code == 403
    assert client.delete(f"/v1/sources/exclusions/{ids[0]}",
                         headers=other_tenant["compliance"]).status_code == 404
    assert client.delete(f"/v1/sources/exclusions/{ids[0]}",
                         headers=tenant["compliance"]).status_code == 204
    allowed = client.post("/v1/memories", json={"subject": "u", "text": "x", "source": "s:0"},
                          headers=tenant["app"])
    assert allowed.status_code == 201


def test_exclusions_are_paged_by_the_database(
    client: Any, tenant: dict[str, Any]
) -> None:
    """A page of two out of five reads at most three rows (two and the one that says more
    follow), both for the first page and for the page after a cursor."""
    from sqlalchemy import event

    from app.core import db

    ids = [client.post("/v1/sources/exclusions", json={"source": f"page:{i}"},
                       headers=tenant["app"]).json()["id"] for i in range(5)]
    fetched: list[tuple[str, int]] = []

    def count_rows(_conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "source_exclusion" in statement:
            fetched.append((statement, cursor.rowcount))

    event.listen(db.app_engine(), "after_cursor_execute", count_rows)
    try:
        first = client.get("/v1/sources/exclusions?limit=2", headers=tenant["app"]).json()
        second = client.get(f"/v1/sources/exclusions?limit=2&cursor={first['next_cursor']}",
                            headers=tenant["app"]).json()
        last = client.get(f"/v1/sources/exclusions?limit=2&cursor={second['next_cursor']}",
                          headers=tenant["app"]).json()
    finally:
        event.remove(db.app_engine(), "after_cursor_execute", count_rows)
    assert [e["id"] for e in first["data"]] == ids[:2]
    assert [e["id"] for e in second["data"]] == ids[2:4]
    assert [e["id"] for e in last["data"]] == ids[4:] and last["next_cursor"] is None
    pages = [(statement, rows) for statement, rows in fetched if "LIMIT" in statement.upper()]
    assert len(pages) == 3, fetched
    assert max(rows for _, rows in fetched) <= 3, fetched
    unknown = client.get(f"/v1/sources/exclusions?cursor={tenant['id']}", headers=tenant["app"])
    assert unknown.json() == {"data": [], "next_cursor": None}
