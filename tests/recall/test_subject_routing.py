"""Every version is routed by its memory's tenant and subject (migration 0014), and routing
keeps the cosine order within a subject, so a walk of the routed index ranks as recall does."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest

from app.embeddings.runtime import embedder
from app.keys import digests
from app.recall import candidates
from bench.synthetic import QUERIES, memory_texts
from tests.recall import bulk


def _routes(owner_conn: psycopg.Connection[Any], tenant_id: str) -> list[tuple[Any, ...]]:
    """(subject, seq, stored route, the route its tenant and subject call for) per version."""
    return owner_conn.execute(
        "SELECT m.subject, v.seq, v.route, lethe_subject_route(m.tenant_id, m.subject)"
        " FROM memory_version v JOIN memory m ON m.id = v.memory_id"
        " WHERE v.tenant_id = %s ORDER BY m.subject, v.seq", (tenant_id,)).fetchall()


def test_every_version_written_through_the_api_is_routed_by_its_subject(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any],
    owner_conn: psycopg.Connection[Any],
) -> None:
    """A new memory, a slot's new version and an edit each get the route of their subject;
    the same subject in another tenant gets another route."""
    for subject, text_ in [("user:ana", "Lives in Porto."), ("user:ana", "Moved to Lisbon."),
                           ("user:ben", "Keeps bees.")]:
        response = client.post("/v1/memories", headers=tenant["app"],
                               json={"subject": subject, "key": "home", "text": text_})
        assert response.status_code in (200, 201), response.text
    memory_id = response.json()["id"]
    response = client.patch(f"/v1/memories/{memory_id}", json={"text": "Keeps two hives."},
                            headers={**tenant["app"], "If-Match": response.headers["ETag"]})
    assert response.status_code == 200, response.text
    response = client.post("/v1/memories", headers=other_tenant["app"],
                           json={"subject": "user:ana", "text": "Lives in Oslo."})
    assert response.status_code == 201, response.text

    routes = _routes(owner_conn, tenant["id"])
    tenant_id = uuid.UUID(tenant["id"])
    named = {digests.subject_digest(tenant_id, name): name for name in ("user:ana", "user:ben")}
    assert sorted((named[subject], seq) for subject, seq, _, _ in routes) == [
        ("user:ana", 1), ("user:ana", 2), ("user:ben", 1), ("user:ben", 2)]
    assert all(stored == wanted for _, _, stored, wanted in routes)
    assert routes[0][2] != routes[2][2]
    (other,) = _routes(owner_conn, other_tenant["id"])
    assert other[2] == other[3] != routes[0][2]


def test_the_route_an_insert_names_is_replaced_and_a_version_needs_its_memory(
    client: Any, tenant: dict[str, Any], owner_conn: psycopg.Connection[Any],
) -> None:
    response = client.post("/v1/memories", headers=tenant["app"],
                           json={"subject": "user:ana", "text": "Lives in Porto."})
    assert response.status_code == 201, response.text
    memory_id = response.json()["id"]
    owner_conn.execute(
        "INSERT INTO memory_version (id, tenant_id, memory_id, seq, sealed_text, route)"
        " VALUES (gen_random_uuid(), %s, %s, 2, '', 42)",
        (tenant["id"], memory_id))
    assert all(stored == wanted for _, _, stored, wanted in _routes(owner_conn, tenant["id"]))
    with pytest.raises(psycopg.errors.ForeignKeyViolation, match="names no memory"):
        owner_conn.execute(
            "INSERT INTO memory_version (id, tenant_id, memory_id, seq, sealed_text)"
            " VALUES (gen_random_uuid(), %s, gen_random_uuid(), 1, '')", (tenant["id"],))


def test_routing_keeps_the_cosine_order_within_a_subject(
    tenant: dict[str, Any], owner_conn: psycopg.Connection[Any],
) -> None:
    """Sorted by the routed L2 distance, a subject's versions come in the order of their
    cosine distance, ahead of another subject's; a query vector of another length routes
    the same (it is normalized)."""
    tenant_id = uuid.UUID(tenant["id"])
    texts = list(memory_texts(120, distinct=True))
    vectors = embedder().embed(texts)
    bulk.load(owner_conn, tenant_id, [
        (uuid.uuid4(), "user:one" if index % 2 else "user:two", text_, vector)
        for index, (text_, vector) in enumerate(zip(texts, vectors, strict=True))])
    one = digests.subject_digest(tenant_id, "user:one")  # as the memories store it
    routed = (
        "SELECT m.subject, m.id FROM memory_version v JOIN memory m ON m.id = v.memory_id"
        " WHERE m.tenant_id = %(tenant)s ORDER BY"
        " lethe_routed(v.embedding, v.route) <-> lethe_routed(CAST(%(q)s AS vector),"
        " lethe_subject_route(%(tenant)s, %(one)s)), m.id")
    cosine = (
        "SELECT m.id FROM memory_version v JOIN memory m ON m.id = v.memory_id"
        " WHERE m.tenant_id = %(tenant)s AND m.subject = %(one)s"
        " ORDER BY v.embedding <=> CAST(%(q)s AS vector), m.id")
    for query in QUERIES[:3]:
        vector = embedder().embed_one(query)
        for scale in (1.0, 3.0):
            ask = {"tenant": tenant_id, "one": one,
                   "q": candidates.vector_literal([value * scale for value in vector])}
            ranked = owner_conn.execute(routed, ask).fetchall()
            assert [memory_id for subject, memory_id in ranked if subject == one] == [
                memory_id for (memory_id,) in owner_conn.execute(cosine, ask)]
            # The other subject stands apart by its code (unless the two codes differ in
            # only a bit or two, once in a few hundred tenants).
            first = [subject for subject, _ in ranked[:30]]
            assert first.count(one) >= 25, first
