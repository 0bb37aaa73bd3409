"""A copy of the database taken before an erasure yields none of the erased subject's content
afterwards: its key is destroyed in the key store, so the dump's ciphertexts of that subject
open to nothing, while every other subject's still open, and the API serving such a copy shows
the subject as erased (issue: erasure destroys keys)."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path
from typing import Any

import pgserver
import psycopg

from app.idempotency import sealing as answers
from tests import sealed
from tests.conftest import _CLEAN_SQL, _libpq, own_database
from tests.erasure.helpers import SUBJECT, file, remember, run

OTHER = "user:kept-in-the-copy"


def _bin(name: str) -> str:
    return str(Path(pgserver.__file__).parent / "pginstall" / "bin" / name)


def test_a_dump_taken_before_an_erasure_opens_nothing_of_the_subject_after_it(
    client: Any, tenant: dict[str, Any], database: dict[str, Any], tmp_path: Path
) -> None:
    app = tenant["app"]
    erased = remember(client, app, SUBJECT, "Keeps bees at Hollowmere",
                      idempotency_key="copy-1")
    kept = remember(client, app, OTHER, "Plays the theorbo on Sundays")
    dump = tmp_path / "before.sql"
    subprocess.run([_bin("pg_dump"), "--no-owner", "-f", str(dump),
                    _libpq(database["url"])], check=True, capture_output=True)

    filed = file(client, app)
    assert run(filed["id"], tenant["id"]) == "completed"

    # The copy holds the subject's rows as they were, sealed under the destroyed key.
    with own_database(database, "restored") as restored_url:
        subprocess.run([_bin("psql"), "-q", "-v", "ON_ERROR_STOP=1", "-f", str(dump),
                        _libpq(restored_url)], check=True, capture_output=True)
        with psycopg.connect(_libpq(restored_url)) as copy:
            assert sealed.texts(copy, "m.id = %s", (erased,)) == [""]
            assert sealed.texts(copy, "m.id = %s", (kept,)) == [
                "Plays the theorbo on Sundays"]
            stored = copy.execute("SELECT response_body FROM operation "
                                  "WHERE idempotency_key = 'copy-1'").fetchone()[0]
    # Its stored answer replays erased, not the text it showed.
    assert answers.open_answer(uuid.UUID(tenant["id"]), "copy-1", stored) == {
        "id": erased, "state": "forgotten"}


def test_the_api_serves_a_copy_restored_from_before_an_erasure_with_the_subject_erased(
    client: Any, tenant: dict[str, Any], database: dict[str, Any], tmp_path: Path
) -> None:
    """The database restored in place from a dump taken before an erasure, the key store as
    the erasure left it: the erased subject's memories read as erased everywhere (404 by ID,
    absent from pages and recall), not as live memories with empty text."""
    app = tenant["app"]
    erased = [remember(client, app, SUBJECT, "Keeps bees at Hollowmere"),
              remember(client, app, SUBJECT, "Drinks nettle tea at Hollowmere")]
    kept = remember(client, app, OTHER, "Keeps goats at Hollowmere")
    dump = tmp_path / "before.sql"
    subprocess.run([_bin("pg_dump"), "--data-only", "--disable-triggers",
                    "--exclude-table-data=alembic_version", "--exclude-table-data=kombu_*",
                    "-f", str(dump), _libpq(database["url"])], check=True,
                   capture_output=True)
    filed = file(client, app)
    assert run(filed["id"], tenant["id"]) == "completed"

    with psycopg.connect(_libpq(database["url"]), autocommit=True) as owner:
        owner.execute(_CLEAN_SQL)
    subprocess.run([_bin("psql"), "-q", "-v", "ON_ERROR_STOP=1", "-f", str(dump),
                    _libpq(database["url"])], check=True, capture_output=True)

    for memory_id in erased:
        for path in ("", "/versions", "/lineage"):
            answer = client.get(f"/v1/memories/{memory_id}{path}", headers=app)
            assert answer.status_code == 404, (path, answer.text)
        edited = client.patch(f"/v1/memories/{memory_id}", json={"text": "Keeps wasps"},
                              headers={**app, "If-Match": '"1"'})
        assert edited.status_code == 404, edited.text
    assert client.get(f"/v1/memories/{kept}", headers=app).json()["text"] == \
        "Keeps goats at Hollowmere"
    listed = client.get("/v1/memories", headers=app).json()["data"]
    assert [memory["id"] for memory in listed] == [kept]
    assert client.get("/v1/memories", params={"subject": SUBJECT},
                      headers=app).json()["data"] == []
    for mode in ("hybrid", "vector", "keyword"):
        recalled = client.post("/v1/recall", headers=app, json={
            "subject": SUBJECT, "query": "Hollowmere bees tea", "mode": mode})
        assert recalled.status_code == 200, recalled.text
        assert recalled.json()["results"] == [], mode
        other = client.post("/v1/recall", headers=app, json={
            "subject": OTHER, "query": "Hollowmere goats", "mode": mode}).json()["results"]
        assert [found["memory"]["id"] for found in other] == [kept], mode
