from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.memories.helpers import created

ANA, BOB = "user:ana", "user:bob"
FORGOTTEN_TEXT = "Allergic to hazelnuts since childhood."
BOB_TEXTS = ("Keeps bees on the roof in Braga.", "Plays the oboe in a quartet in Braga.",
             "Also keeps bees, like the neighbour.")


@dataclass
class Seeded:
    """Ana's memories (and Bob's look-alikes) as the API created them."""

    bees: dict[str, Any]
    oboe: dict[str, Any]
    music: dict[str, Any]
    forgotten: dict[str, Any]
    bob: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ana_ids(self) -> set[str]:
        return {m["id"] for m in (self.bees, self.oboe, self.music, self.forgotten)}


def seed(client: Any, headers: dict[str, str]) -> Seeded:
    bees = created(client, headers, subject=ANA, text="Keeps bees on the roof in Porto.",
                   source="conversation:1")
    oboe = created(client, headers, subject=ANA, text="Plays the oboe in a quartet.",
                   source="conversation:2", metadata={"lang": "en"}, key="instrument")
    edited = client.patch(f"/v1/memories/{oboe['id']}",
                          json={"text": "Plays the oboe in an orchestra now."},
                          headers={**headers, "If-Match": '"1"'})
    assert edited.status_code == 200, edited.text
    music = created(client, headers, subject=ANA, text="Makes music and honey at weekends.",
                    derived_from=[bees["id"], oboe["id"]])
    forgotten = created(client, headers, subject=ANA, text=FORGOTTEN_TEXT,
                        source="conversation:3")
    assert client.delete(f"/v1/memories/{forgotten['id']}", headers=headers).status_code == 204
    bob = [
        created(client, headers, subject=BOB, text=BOB_TEXTS[0], source="conversation:1"),
        created(client, headers, subject=BOB, text=BOB_TEXTS[1], source="conversation:9"),
        created(client, headers, subject=BOB, text=BOB_TEXTS[2], derived_from=[bees["id"]]),
    ]
    # Bob's forget leaves an audit trail, a retraction and an exclusion: none of it is Ana's.
    assert client.delete(f"/v1/memories/{bob[1]['id']}", headers=headers).status_code == 204
    return Seeded(bees=bees, oboe=oboe, music=music, forgotten=forgotten, bob=bob)


def request_access(client: Any, headers: dict[str, str], subject: str = ANA,
                   key: str | None = None) -> str:
    extra = {"Idempotency-Key": key} if key else {}
    response = client.post("/v1/access-requests", json={"subject": subject},
                           headers={**headers, **extra})
    assert response.status_code == 202, response.text
    body = response.json()
    assert set(body) == {"operation_id", "kind", "status"} and body["status"] == "queued"
    assert response.headers["Location"] == f"/v1/operations/{body['operation_id']}"
    operation_id: str = body["operation_id"]
    return operation_id


def download(client: Any, headers: dict[str, str], request_id: str) -> tuple[bytes, Any]:
    response = client.get(f"/v1/access-requests/{request_id}/export", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.headers["content-disposition"] == (
        f'attachment; filename="lethe-access-export-{request_id}.json"')
    return response.content, json.loads(response.content)


def assert_holds_ana_only(raw: bytes, document: dict[str, Any], seeded: Seeded) -> None:
    """Every memory and version of Ana's, her forgotten one as a tombstone, nothing of Bob's."""
    text = raw.decode()
    assert document["subject"] == ANA
    shown = {m["id"]: m for m in document["memories"]}
    assert set(shown) == seeded.ana_ids - {seeded.forgotten["id"]}
    assert [t["id"] for t in document["forgotten"]] == [seeded.forgotten["id"]]
    assert set(document["forgotten"][0]) == {"id", "state", "created_at", "forgotten_at"}
    texts = {m["id"]: [v["text"] for v in m["versions"]] for m in document["memories"]}
    assert texts[seeded.oboe["id"]] == ["Plays the oboe in a quartet.",
                                        "Plays the oboe in an orchestra now."]
    assert texts[seeded.bees["id"]] == ["Keeps bees on the roof in Porto."]
    assert texts[seeded.music["id"]] == ["Makes music and honey at weekends."]
    assert document["counts"]["versions"] == 4
    for forbidden in (FORGOTTEN_TEXT, "hazelnut", BOB, *BOB_TEXTS, "conversation:9",
                      *(m["id"] for m in seeded.bob)):
        assert forbidden not in text, forbidden
