"""Retrieval quality on a labelled fixture of paraphrased queries (not substrings).

recall@5 = share of expected memories found in the top five, averaged over queries. Each
subject also holds every other subject's facts as distractors (~75 memories per subject), so
"which city is he in?" must pick this person's city among six people's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "retrieval.json"


@pytest.fixture(scope="module")
def seeded(app: Any, database: dict[str, Any]) -> Any:
    from fastapi.testclient import TestClient

    data = json.loads(FIXTURE.read_text())
    with TestClient(app) as client:
        created = client.post(
            "/v1/tenants", json={"name": "Quality"},
            headers={"Authorization": f"Bearer {_admin_token()}"},
        ).json()
        headers = {"Authorization": f"Bearer {created['api_keys']['app']}"}
        ids: dict[str, str] = {}
        for memory in data["memories"]:
            body = {k: memory[k] for k in ("subject", "text", "volatility", "key")}
            response = client.post("/v1/memories", json=body, headers=headers)
            assert response.status_code == 201, response.text
            ids[memory["ref"]] = response.json()["id"]
        # Distractors: every other subject's facts filed under this subject too, so the top
        # five are chosen from ~75 memories per subject, not a dozen.
        subjects = sorted({m["subject"] for m in data["memories"]})
        for subject in subjects:
            for memory in data["memories"]:
                if memory["subject"] != subject:
                    body = {"subject": subject, "text": memory["text"],
                            "volatility": memory["volatility"]}
                    response = client.post("/v1/memories", json=body, headers=headers)
                    assert response.status_code == 201, response.text
        scores = {mode: _recall_at_5(client, headers, data["queries"], ids, mode)
                  for mode in ("hybrid", "vector", "keyword")}
    yield scores


def _admin_token() -> str:
    import os

    return os.environ["LETHE_ADMIN_TOKEN"]


def _recall_at_5(
    client: Any, headers: dict[str, str], queries: list[dict[str, Any]], ids: dict[str, str],
    mode: str,
) -> float:
    total = 0.0
    for query in queries:
        response = client.post(
            "/v1/recall",
            json={"subject": query["subject"], "query": query["query"], "limit": 5, "mode": mode},
            headers=headers,
        )
        assert response.status_code == 200, response.text
        found = {result["memory"]["id"] for result in response.json()["results"]}
        expected = {ids[ref] for ref in query["expected"]}
        total += len(found & expected) / len(expected)
    return total / len(queries)


# Scores are computed once per module and asserted separately, so a failure names its claim.
def test_fixture_is_large_and_paraphrased() -> None:
    data = json.loads(FIXTURE.read_text())
    assert len(data["memories"]) >= 60 and len(data["queries"]) >= 40
    texts = {m["ref"]: m["text"].lower() for m in data["memories"]}
    for query in data["queries"]:
        for ref in query["expected"]:
            assert query["query"].lower().rstrip("?") not in texts[ref]


def test_hybrid_recall_at_5_is_at_least_0_9(seeded: dict[str, float]) -> None:
    print("recall@5:", seeded)
    assert seeded["hybrid"] >= 0.9, seeded


def test_hybrid_is_at_least_as_good_as_either_alone(seeded: dict[str, float]) -> None:
    assert seeded["hybrid"] >= seeded["vector"], seeded
    assert seeded["hybrid"] >= seeded["keyword"], seeded
