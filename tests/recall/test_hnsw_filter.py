"""With a selective subject filter the HNSW scan keeps going until `limit` rows match."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sqlalchemy import text

from app.core import db, uow
from app.core.models import utcnow
from app.embeddings.runtime import embedder
from app.keys import digests
from app.memories import service
from app.memories.models import ROUTED_INDEX
from app.memories.schemas import MemoryCreate
from app.recall import candidates, small_subjects
from app.recall import service as recall_service
from app.recall.schemas import RecallMode, RecallRequest
from bench.synthetic import memory_texts


def _seed_crowd_and_few(tenant_id: uuid.UUID) -> list[str]:
    crowd = list(memory_texts(300))
    few = ["Keeps bees on the roof.", "Plays the cello badly.", "Grows chillies on the balcony.",
           "Collects vintage maps.", "Swims in the sea all winter."]
    vectors = embedder().embed(crowd + few)
    with uow.unit_of_work(tenant_id) as session:
        for index, (text_, vector) in enumerate(zip(crowd + few, vectors, strict=True)):
            subject = "user:crowd" if index < len(crowd) else "user:few"
            service.create(session, tenant_id=tenant_id, actor="system:test",
                           body=MemoryCreate(subject=subject, text=text_), embedding=vector)
    with uow.unit_of_work(tenant_id) as session:
        session.execute(text("ANALYZE memory_version"))
    return crowd


def test_iterative_scan_fills_the_limit_under_a_selective_filter(
    tenant: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant_id = uuid.UUID(tenant["id"])
    crowd = _seed_crowd_and_few(tenant_id)
    query = embedder().embed_one(crowd[0])  # nearest neighbours are all in the crowd
    monkeypatch.setattr(small_subjects, "RANK_IN_PROCESS_UP_TO", 0)
    monkeypatch.setattr(candidates, "EXACT_UP_TO", 0)  # walk, as for a large subject
    with uow.unit_of_work(tenant_id) as session:
        # Make the planner take the HNSW index, as it does for large subjects.
        session.execute(text("SET LOCAL enable_sort = off"))
        session.execute(text("SET LOCAL enable_seqscan = off"))
        plan = "\n".join(
            row[0] for row in db.driver_connection(session).execute(
                "EXPLAIN " + candidates._WALK_VECTOR_SQL,
                {"embedding": candidates.vector_literal(query),
                 "subject": digests.subject_digest(tenant_id, "user:few"),
                 "states": ["active"], "n": 5, "now": utcnow()},
            )
        )
        assert ROUTED_INDEX in plan, plan
        db.set_locals(session, candidates.scan_settings())
        found = candidates.lists(session, subject=digests.subject_digest(tenant_id, "user:few"),
                states=["active"],
                                 embedding=query, n=5).vector
    assert found is not None and len(found) == 5


def test_recall_names_the_iterative_scan_for_its_transaction(
    tenant: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recall transaction carries `scan_settings`: with them the HNSW path fills the limit;
    the same path without iterative scans returns no more than `ef_search` versions."""
    tenant_id = uuid.UUID(tenant["id"])
    crowd = _seed_crowd_and_few(tenant_id)
    query = embedder().embed_one(crowd[0])
    request = RecallRequest(subject="user:few", query=crowd[0], mode=RecallMode.vector, limit=5)
    forced_index = {"enable_sort": "off", "enable_seqscan": "off"}
    scan_settings = candidates.scan_settings
    monkeypatch.setattr(small_subjects, "RANK_IN_PROCESS_UP_TO", 0)
    monkeypatch.setattr(candidates, "EXACT_UP_TO", 0)  # walk, as for a large subject

    monkeypatch.setattr(candidates, "scan_settings",
                        lambda: {**scan_settings(), **forced_index})
    assert len(recall_service.recall(tenant_id, request, query).results) == 5

    monkeypatch.setattr(candidates, "scan_settings", lambda: {
        **forced_index, "hnsw.iterative_scan": "off", "hnsw.ef_search": "3"})
    assert len(recall_service.recall(tenant_id, request, query).results) < 5
