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

    markers = [text, correction, metadata, about, forgotten]
    lexemes = {lexeme for marker in markers for (lexeme,) in owner_conn.execute(
        "SELECT unnest(tsvector_to_array(to_tsvector('english', %s)))", (marker,))}
    assert _on_disk(owner_conn, {m.encode() for m in {*markers, *lexemes}}) == {}


def _on_disk(owner_conn: psycopg.Connection[Any], needles: set[bytes]) -> dict[str, list[str]]:
    """After a CHECKPOINT, the files of the data folder (the WAL included) holding each of
    ``needles`` (those in none left out). A control marker written in clear must be found,
    so a search that reads nothing cannot pass."""
    control = _marker("control")
    owner_conn.execute("CREATE TABLE at_rest_control (said text)")
    try:
        owner_conn.execute("INSERT INTO at_rest_control VALUES (%s)", (control,))
        owner_conn.execute("CHECKPOINT")
        row = owner_conn.execute("SELECT current_setting('data_directory')").fetchone()
        assert row is not None
        found = _found(Path(row[0]), needles | {control.encode()})
    finally:
        owner_conn.execute("DROP TABLE at_rest_control")
    assert found.pop(control.encode()), "the search found not even what was written in clear"
    return {needle.decode(): files for needle, files in found.items() if files}


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


def test_subjects_and_sources_are_in_no_file_of_the_database(
    client: Any, tenant: dict[str, Any], owner_conn: psycopg.Connection[Any],
) -> None:
    """Subjects and sources are stored as keyed digests, shown from sealed copies: a memory's
    subject and source, a legal hold's by subject and by source, an access request's, an
    erasure request's, a retraction's and a source exclusion's are in no file, the WAL
    included, while every read still shows them."""
    subject, source, held, held_source, asked, erased, excluded = (
        f"user:{_marker(kind)}" for kind in
        ("subj", "src", "hold", "hsrc", "access", "erase", "excl"))
    app, compliance = tenant["app"], tenant["compliance"]
    written = client.post("/v1/memories", headers=app, json={
        "subject": subject, "text": "Prefers the window seat.", "source": source})
    assert written.status_code == 201, written.text
    memory_id = written.json()["id"]
    assert (written.json()["subject"], written.json()["source"]) == (subject, source)
    shown = client.get(f"/v1/memories/{memory_id}", headers=app).json()
    assert (shown["subject"], shown["source"]) == (subject, source)
    listed = client.get("/v1/memories", headers=app, params={"subject": subject}).json()
    assert [m["id"] for m in listed["data"]] == [memory_id]
    by_source = client.get("/v1/memories", headers=app, params={"source": source}).json()
    assert [m["id"] for m in by_source["data"]] == [memory_id]
    lineage = client.get(f"/v1/memories/{memory_id}/lineage", headers=app).json()
    assert [(p["kind"], p["ref"]) for p in lineage["parents"]] == [("source", source)]
    retracted = client.post("/v1/forget", headers=app, json={
        "subject": subject, "about": "the window seat"})
    assert retracted.status_code == 200, retracted.text

    holds = [client.post("/v1/legal-holds", headers=compliance, json={
        **scope, "reason": "litigation"}) for scope in ({"subject": held},
                                                       {"source": held_source})]
    assert [h.status_code for h in holds] == [201, 201], [h.text for h in holds]
    assert [h.json()["scope"] for h in holds] == [{"subject": held}, {"source": held_source}]
    again = client.get(f"/v1/legal-holds/{holds[0].json()['id']}", headers=compliance).json()
    assert again["scope"] == {"subject": held}
    access = client.post("/v1/access-requests", headers=compliance, json={"subject": asked})
    assert access.status_code == 202, access.text
    erasure = client.post("/v1/erasure-requests", headers=compliance, json={"subject": erased})
    assert erasure.status_code == 202, erasure.text
    exclusion = client.post("/v1/sources/exclusions", headers=app, json={"source": excluded})
    assert exclusion.status_code == 201, exclusion.text
    assert exclusion.json()["source"] == excluded
    listed_exclusions = client.get("/v1/sources/exclusions", headers=app).json()["data"]
    assert excluded in [e["source"] for e in listed_exclusions]

    # The markers whole, and without their `user:` prefix.
    markers = [subject, source, held, held_source, asked, erased, excluded]
    needles = {m.encode() for m in markers} | {m.removeprefix("user:").encode()
                                               for m in markers}
    assert _on_disk(owner_conn, needles) == {}


def test_two_tenants_store_one_subject_under_different_digests(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any],
    owner_conn: psycopg.Connection[Any],
) -> None:
    ids = [client.post("/v1/memories", headers=who["app"], json={
        "subject": SUBJECT, "text": "Lives in Porto.", "source": "crm:1"}).json()["id"]
        for who in (tenant, other_tenant)]
    rows = owner_conn.execute("SELECT subject, source FROM memory WHERE id = ANY(%s::uuid[])",
                              (ids,)).fetchall()
    assert len({subject for subject, _ in rows}) == 2
    assert len({source for _, source in rows}) == 2
    assert all(SUBJECT not in subject and "crm:1" not in source for subject, source in rows)
