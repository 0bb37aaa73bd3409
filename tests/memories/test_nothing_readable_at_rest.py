"""Nothing readable at rest: what a memory says is in no file PostgreSQL writes.

Distinctive markers go into a memory's text, its correction, its metadata and a retraction's
`about` phrase through the API; after a CHECKPOINT every file of the server's data folder —
tables, indexes, the WAL — is searched byte by byte for them, and for the lexemes keyword
search derives from them. A control marker written in clear by the test itself must be found,
so a search that reads nothing cannot pass.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from app.keys import subjects
from tests import sealed

SUBJECT = "user:at-rest"


def _marker(kind: str) -> str:
    # Letters and digits, ending in a digit: one word to the parser, left whole by the stemmer.
    return f"qz{kind}{uuid.uuid4().hex[:12]}7"


def _found(folder: Path, needles: set[bytes]) -> dict[bytes, list[str]]:
    """Each needle's files under ``folder`` (relative paths), read whole."""
    found: dict[bytes, list[str]] = {needle: [] for needle in needles}
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue  # a file PostgreSQL removed while the walk went by
        for needle in needles:
            if needle in data:
                found[needle].append(str(path.relative_to(folder)))
    return found


def test_texts_corrections_metadata_and_about_phrases_are_in_no_file_of_the_database(
    client: Any, tenant: dict[str, Any], owner_conn: psycopg.Connection[Any],
) -> None:
    text, correction, metadata, about, forgotten = (
        _marker(kind) for kind in ("text", "corr", "meta", "about", "gone"))
    headers = tenant["app"]
    kept = client.post("/v1/memories", headers=headers, json={
        "subject": SUBJECT, "text": f"My locker code is {text} at the gym.",
        "metadata": {"note": metadata}})
    assert kept.status_code == 201, kept.text
    memory_id = kept.json()["id"]
    corrected = client.patch(f"/v1/memories/{memory_id}", headers={**headers, "If-Match": '"1"'},
                             json={"text": f"My locker code is {correction} now."})
    assert corrected.status_code == 200, corrected.text
    gone = client.post("/v1/memories", headers=headers, json={
        "subject": SUBJECT, "text": f"I collect {forgotten} sneakers."})
    assert gone.status_code == 201, gone.text
    forget = client.post(f"/v1/memories/{gone.json()['id']}/forget", headers=headers,
                         json={"about": f"the {about} hobby"})
    assert forget.status_code == 200, forget.text

    # Everything reads back through the API: the markers were written, and are kept.
    versions = client.get(f"/v1/memories/{memory_id}/versions", headers=headers).json()["data"]
    assert [text in v["text"] or correction in v["text"] for v in versions] == [True, True]
    recalled = client.post("/v1/recall", headers=headers, json={
        "subject": SUBJECT, "query": f"locker code {correction}", "mode": "keyword"}).json()
    assert [r["memory"]["id"] for r in recalled["results"]] == [memory_id]
    assert recalled["results"][0]["memory"]["metadata"] == {"note": metadata}
    assert [r["about"] for r in recalled["retractions"]] == [f"the {about} hobby"]

    control = _marker("control")
    owner_conn.execute("CREATE TABLE at_rest_control (said text)")
    try:
        owner_conn.execute("INSERT INTO at_rest_control VALUES (%s)", (control,))
        owner_conn.execute("CHECKPOINT")
        row = owner_conn.execute("SELECT current_setting('data_directory')").fetchone()
        assert row is not None
        markers = [text, correction, metadata, about, forgotten]
        lexemes = {lexeme for marker in markers for (lexeme,) in owner_conn.execute(
            "SELECT unnest(tsvector_to_array(to_tsvector('english', %s)))", (marker,))}
        found = _found(Path(row[0]), {m.encode() for m in {*markers, *lexemes, control}})
    finally:
        owner_conn.execute("DROP TABLE at_rest_control")
    assert found.pop(control.encode()), "the search found not even what was written in clear"
    assert {needle.decode(): files for needle, files in found.items() if files} == {}


def test_a_sealed_text_moved_to_another_row_or_tenant_does_not_open(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any],
    owner_conn: psycopg.Connection[Any],
) -> None:
    """The row is bound into each ciphertext, and each tenant's subject has its own key: a
    text copied onto another version, even of the same subject, or onto the same subject's
    version in another tenant, is refused, never shown."""
    porto, nurse, theirs = (
        client.post("/v1/memories", headers=who["app"], json={"subject": SUBJECT, "text": text}
                    ).json()["id"]
        for who, text in ((tenant, "Lives in Porto."), (tenant, "Works as a nurse."),
                          (other_tenant, "Lives in Oslo.")))
    assert sealed.texts(owner_conn, "m.id = %s", (nurse,)) == ["Works as a nurse."]
    for target in (nurse, theirs):
        owner_conn.execute(
            "UPDATE memory_version SET sealed_text = (SELECT sealed_text FROM memory_version"
            " WHERE memory_id = %s) WHERE memory_id = %s", (porto, target))
        with pytest.raises(subjects.Tampered):
            sealed.texts(owner_conn, "m.id = %s", (target,))
