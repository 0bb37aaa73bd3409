"""The keyword list's matches come from `lethe_keyword_matches` (migrations 0010, 0011).

The function runs with its owner's rights, so the tenant it applies itself is all that keeps
other tenants' memories out when the owner bypasses row-level security (as the embedded
server's superuser does); that is also what lets the planner answer a rare term from the GIN
index on `memory_version.search`, which row-level security forbids.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest

from app.core import db, uow
from app.core.migrations import KEYWORD_MATCHES
from app.core.runtime import get_runtime
from app.forgetting.forget import forget_one
from app.keys import digests
from app.memories.lifecycle import transition
from app.memories.models import Memory, MemoryState
from app.recall import candidates
from bench.synthetic import memory_texts
from tests.recall import bulk

SUBJECT = "user:1"
LOCKER = "My locker code at the ZX-400 gym is 4471."
GIN = "ix_memory_version_search"
SUBJECT_INDEX = "ix_memory_tenant_id_subject_state"
MATCHES_SQL = (
    "SELECT memory_id FROM lethe_keyword_matches(%(subject)s, %(states)s, ARRAY("
    "SELECT to_tsquery('simple', quote_literal(term)) FROM unnest(%(terms)s::text[]) AS term),"
    " %(per_term)s)"
)
LIVE = ["active", "suspect"]


def LARGE_SUBJECT(tenant_id: uuid.UUID) -> str:
    """user:large as the memories store it."""
    return digests.subject_digest(tenant_id, "user:large")


def _remember(client: Any, tenant: dict[str, Any], text: str, **extra: Any) -> str:
    response = client.post("/v1/memories", json={"subject": SUBJECT, "text": text, **extra},
                           headers=tenant["app"])
    assert response.status_code == 201, response.text
    memory_id: str = response.json()["id"]
    return memory_id


def _recall_ids(client: Any, tenant: dict[str, Any], query: str) -> list[str]:
    response = client.post("/v1/recall", headers=tenant["app"], json={
        "subject": SUBJECT, "query": query, "mode": "keyword"})
    assert response.status_code == 200, response.text
    return [result["memory"]["id"] for result in response.json()["results"]]


def _matches(conn: psycopg.Connection[Any], keyed: str, query: str, states: list[str] = LIVE,
             subject: str = SUBJECT) -> set[str]:
    """The function's matches for ``query``'s terms hashed under tenant ``keyed``'s key."""
    stored = digests.subject_digest(uuid.UUID(keyed), subject) if keyed else subject
    rows = conn.execute(MATCHES_SQL, {"subject": stored, "states": states, "per_term": 1_000,
                                      "terms": bulk.terms(conn, keyed, subject, query)})
    return {str(row[0]) for row in rows}


def _as_app(tenant_id: str | None, query: str, states: list[str] = LIVE,
            keyed: str | None = None) -> set[str]:
    """The function's matches as the application role sees them, in a tenant or none (the
    query hashed under ``keyed``'s key, by default the tenant's)."""
    with uow.unit_of_work(None if tenant_id is None else uuid.UUID(tenant_id)) as session:
        return _matches(db.driver_connection(session), keyed or tenant_id or "", query, states)


def test_matches_never_cross_tenants(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any],
    owner_conn: psycopg.Connection[Any],
) -> None:
    ours = _remember(client, tenant, LOCKER)
    theirs = _remember(client, other_tenant, LOCKER)
    assert _recall_ids(client, tenant, "ZX-400 locker") == [ours]
    assert _recall_ids(client, other_tenant, "ZX-400 locker") == [theirs]
    assert _as_app(tenant["id"], "ZX-400 locker") == {ours}
    assert _as_app(other_tenant["id"], "ZX-400 locker") == {theirs}
    assert _as_app(None, "ZX-400 locker", keyed=tenant["id"]) == set()
    # One tenant's terms are not another's: its hashes find nothing there.
    assert _as_app(other_tenant["id"], "ZX-400 locker", keyed=tenant["id"]) == set()
    # The owner (a superuser here) is bound by no policy: the function's own filter is what
    # holds, with a tenant named and without one.
    with owner_conn.transaction():
        assert _matches(owner_conn, tenant["id"], "ZX-400 locker") == set()
        owner_conn.execute("SELECT set_config('lethe.tenant_id', %s, true)", (tenant["id"],))
        assert _matches(owner_conn, tenant["id"], "ZX-400 locker") == {ours}


def test_only_the_application_role_may_run_it(owner_conn: psycopg.Connection[Any]) -> None:
    app_role = get_runtime().app_role
    allowed = owner_conn.execute(
        "SELECT has_function_privilege(%s, %s, 'EXECUTE'),"
        " has_function_privilege('public', %s, 'EXECUTE')",
        (app_role, KEYWORD_MATCHES, KEYWORD_MATCHES)).fetchone()
    assert allowed == (True, False)
    row = owner_conn.execute(
        "SELECT prosecdef, proconfig FROM pg_proc WHERE oid = to_regprocedure(%s)",
        (KEYWORD_MATCHES,)).fetchone()
    assert row is not None
    definer, config = row
    assert definer is True
    assert set(config) == {"search_path=pg_catalog, pg_temp",
                           "plan_cache_mode=force_custom_plan",
                           "random_page_cost=1.1", "max_parallel_workers_per_gather=0"}


def test_only_current_versions_of_memories_in_the_asked_states_match(
    client: Any, tenant: dict[str, Any]
) -> None:
    live = _remember(client, tenant, LOCKER)
    old = _remember(client, tenant, "The ZX-400 gym used to open at six.")
    _remember(client, tenant, "The ZX-400 gym now opens at seven.", supersedes=[old])
    quarantined = _remember(client, tenant, "The ZX-400 gym shares my locker with Ana.")
    forgotten = _remember(client, tenant, "I cancelled the ZX-400 gym membership once.")
    reworded = _remember(client, tenant, "I drive to the ZX-400 gym.")
    response = client.patch(f"/v1/memories/{reworded}", json={"text": "I take the tram."},
                            headers={**tenant["app"], "If-Match": '"1"'})
    assert response.status_code == 200, response.text
    tenant_id = uuid.UUID(tenant["id"])
    with uow.unit_of_work(tenant_id) as session:
        row = session.get(Memory, uuid.UUID(quarantined))
        assert row is not None
        transition(session, row, MemoryState.quarantined, reason="test", actor="system:test")
        row = session.get(Memory, uuid.UUID(forgotten))
        assert row is not None
        forget_one(session, row, reason="test", actor="system:test")

    found = _as_app(tenant["id"], "ZX-400")
    assert live in found and old not in found
    assert not found & {quarantined, forgotten, reworded}
    assert old in _as_app(tenant["id"], "ZX-400", ["deprecated"])
    assert _as_app(tenant["id"], "drive") == set()  # only the old version said it
    assert _as_app(tenant["id"], "tram") == {reworded}
    with uow.unit_of_work(tenant_id) as session:
        keyword = candidates.lists(session, subject=digests.subject_digest(tenant_id, SUBJECT),
                states=LIVE,
                                   n=40, terms=bulk.terms(
            db.driver_connection(session), tenant_id, SUBJECT, "ZX-400 locker code")).keyword
    assert keyword is not None and [str(memory_id) for memory_id, _ in keyword] == [live]


LARGE = 3_000
SMALL = 20
RARE = "ZX-400"


def _seed(owner_conn: psycopg.Connection[Any], tenant_id: uuid.UUID) -> str:
    """LARGE memories of user:large, one of them naming RARE, and SMALL of user:small, without
    embeddings (the keyword list does not read them)."""
    planted = uuid.uuid4()
    rows = []
    for index, text_ in enumerate(memory_texts(LARGE + SMALL)):
        memory_id = planted if index == 7 else uuid.uuid4()
        rows.append((memory_id, "user:large" if index < LARGE else "user:small",
                     f"My locker at the {RARE} gym. {text_}" if index == 7 else text_, None))
    bulk.load(owner_conn, tenant_id, rows)
    # What autovacuum does after a bulk load: entries still in the GIN index's pending list
    # are read one by one at every search, and the planner rightly avoids the index then.
    owner_conn.execute("SELECT gin_clean_pending_list(%s::regclass)", (GIN,))
    return str(planted)


def _scans(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Scans of each index so far in this transaction (counted by this backend, whatever
    role a statement ran as)."""
    row = conn.execute("SELECT pg_stat_get_xact_numscans(to_regclass(%s)),"
                       " pg_stat_get_xact_numscans(to_regclass(%s))",
                       (GIN, SUBJECT_INDEX)).fetchone()
    assert row is not None
    return {GIN: row[0], SUBJECT_INDEX: row[1]}


def _keyword_list(conn: psycopg.Connection[Any], tenant_id: uuid.UUID, subject: str,
                  query: str) -> tuple[list[str], dict[str, int]]:
    """Recall's keyword list in recall's transaction, and the index scans it took."""
    terms = bulk.terms(conn, tenant_id, subject, query)
    before = _scans(conn)
    found = candidates.send(conn, subject=digests.subject_digest(tenant_id, subject),
                            states=["active"], n=40, terms=terms).result().keyword
    assert found is not None
    after = _scans(conn)
    return [str(memory_id) for memory_id, _ in found], {
        index: after[index] - before[index] for index in after}


@pytest.fixture
def seeded(owner_conn: psycopg.Connection[Any], tenant: dict[str, Any]) -> tuple[uuid.UUID, str]:
    tenant_id = uuid.UUID(tenant["id"])
    return tenant_id, _seed(owner_conn, tenant_id)


def test_a_rare_term_in_a_large_subject_is_looked_up_in_the_gin_index(
    seeded: tuple[uuid.UUID, str],
) -> None:
    """Through recall's own path, as the application role: the statement before migration
    0010 never scanned the GIN index (row-level security forbids `@@` in an index scan
    ahead of the policy)."""
    tenant_id, planted = seeded
    with db.read_pipeline(tenant_id, settings=candidates.scan_settings()) as conn:
        found, scans = _keyword_list(conn, tenant_id, "user:large", RARE)
    assert found == [planted]
    assert scans[GIN] >= 1, scans


def test_a_subject_counted_already_is_not_counted_again_by_its_keyword_list(
    seeded: tuple[uuid.UUID, str],
) -> None:
    """Recall reads a larger subject's size before its keyword list; given it, the keyword
    list takes the count from it instead of reading the subject's memories again, and ranks
    the same."""
    tenant_id, planted = seeded
    query = f"{RARE} every week"
    with db.read_pipeline(tenant_id, settings=candidates.scan_settings()) as conn:
        terms = bulk.terms(conn, tenant_id, "user:large", query)
        size = candidates.send_size(conn, subject=LARGE_SUBJECT(tenant_id),
                states=["active"]).result()
        assert size.memories == LARGE

        def keyword_list(given: candidates.SubjectSize | None) -> tuple[list[Any], int]:
            before = _memory_reads(conn)["rows"]
            found = candidates.send(conn, subject=LARGE_SUBJECT(tenant_id), states=["active"], n=40,
                                    terms=terms, size=given).result().keyword
            return found or [], _memory_reads(conn)["rows"] - before

        counting, read_counting = keyword_list(None)
        counted, read_counted = keyword_list(size)
    assert counted == counting and [str(memory_id) for memory_id, _ in counted] == [planted]
    assert read_counting - read_counted >= LARGE, (read_counting, read_counted)


def test_a_term_in_a_large_subject_is_followed_from_its_matches_not_the_subjects_rows(
    owner_conn: psycopg.Connection[Any], tenant: dict[str, Any],
) -> None:
    """A term in one memory in forty of a subject of 20,000 (500): its matches are followed
    to their memories by index (migration 0013). Planned for disks that seek, the lookup read
    every memory row of the subject, most of the table here, once for each term of a query
    (15–35 ms a term at 50,000)."""
    tenant_id = uuid.UUID(tenant["id"])
    texts = memory_texts(HUGE)
    bulk.load(owner_conn, tenant_id, [
        (uuid.uuid4(), "user:huge", f"Back from the hackathon. {text_}" if index % 40 == 0
         else text_, None) for index, text_ in enumerate(texts)])
    owner_conn.execute("SELECT gin_clean_pending_list(%s::regclass)", (GIN,))
    with uow.unit_of_work(tenant_id) as session:
        conn = db.driver_connection(session)
        before = _memory_reads(conn)
        terms = bulk.terms(conn, tenant_id, "user:huge", "hackathon")
        assert terms, "the query's terms were not hashed: the subject's key was not found"
        before = _memory_reads(conn)
        found = [row[0] for row in conn.execute(MATCHES_SQL, {
            "subject": digests.subject_digest(tenant_id, "user:huge"),
                    "states": ["active"], "terms": terms, "per_term": 1_000})]
        after = _memory_reads(conn)
    assert len(found) == HUGE // 40
    assert after == before, (before, after)


HUGE = 20_000


def _memory_reads(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Sequential scans of `memory` so far in this transaction, and the rows read from it by
    them and from its subject index (counted by this backend, whatever role a statement ran
    as)."""
    row = conn.execute("SELECT pg_stat_get_xact_numscans('memory'::regclass),"
                       " pg_stat_get_xact_tuples_returned('memory'::regclass)"
                       " + pg_stat_get_xact_tuples_returned(to_regclass(%s))",
                       (SUBJECT_INDEX,)).fetchone()
    assert row is not None
    return {"seq": row[0], "rows": row[1]}


def test_a_common_term_is_read_only_until_it_is_known_to_be_common(
    seeded: tuple[uuid.UUID, str],
) -> None:
    """Each term stops at `per_term` matches (migration 0011): "week" is in hundreds of the
    large subject's memories, and five are all a caller asking for five gets."""
    tenant_id, planted = seeded
    with uow.unit_of_work(tenant_id) as session:
        conn = db.driver_connection(session)

        def matches(query: str, per_term: int) -> list[str]:
            return [str(row[0]) for row in conn.execute(MATCHES_SQL, {
                "subject": LARGE_SUBJECT(tenant_id), "states": ["active"], "per_term": per_term,
                "terms": bulk.terms(conn, tenant_id, "user:large", query)})]

        assert len(matches("week", 1_000)) > 100
        assert len(matches("week", 5)) == 5
        assert set(matches(RARE, 5)) == {planted}


def test_a_term_common_in_the_subject_is_a_stop_word(seeded: tuple[uuid.UUID, str]) -> None:
    """Words in more than `KEYWORD_MAX_DF_SHARE` of the subject's memories neither testify
    nor weigh against the specific ones: the planted memory has every specific term of the
    query, so its coverage is whole, however common the query's other words."""
    tenant_id, planted = seeded
    with db.read_pipeline(tenant_id, settings=candidates.scan_settings()) as conn:
        common = candidates.send(conn, subject=LARGE_SUBJECT(tenant_id),
                states=["active"], n=40, terms=(
            bulk.terms(conn, tenant_id, "user:large", "every week"))).result().keyword
        found = candidates.send(conn, subject=LARGE_SUBJECT(tenant_id),
                states=["active"], n=40, terms=(
            bulk.terms(conn, tenant_id, "user:large", f"{RARE} every week"))).result().keyword
    assert common == []
    assert found is not None and [str(memory_id) for memory_id, _ in found] == [planted]
    assert found[0][1] == pytest.approx(1.0)


def test_an_owner_bound_by_row_security_still_gets_the_right_matches(
    client: Any, tenant: dict[str, Any], other_tenant: dict[str, Any],
    owner_conn: psycopg.Connection[Any],
) -> None:
    """With an external database the owner may be neither superuser nor BYPASSRLS: the policy
    then applies inside the function too (the index cannot serve `@@`, as before), and the
    answers are the same. Rolled back: the function keeps its owner."""
    ours = _remember(client, tenant, LOCKER)
    _remember(client, other_tenant, LOCKER)
    role = f"lethe_bound_owner_{uuid.uuid4().hex[:8]}"
    app_role = get_runtime().app_role
    with owner_conn.transaction():
        owner_conn.execute(f'CREATE ROLE "{role}" NOLOGIN NOSUPERUSER NOBYPASSRLS')
        owner_conn.execute(f'GRANT USAGE ON SCHEMA public TO "{role}"')
        owner_conn.execute(f'GRANT SELECT ON memory, memory_version TO "{role}"')
        owner_conn.execute(f'ALTER FUNCTION {KEYWORD_MATCHES} OWNER TO "{role}"')
        owner_conn.execute(f'SET LOCAL ROLE "{app_role}"')
        assert _matches(owner_conn, tenant["id"], "ZX-400 locker") == set()
        owner_conn.execute("SELECT set_config('lethe.tenant_id', %s, true)", (tenant["id"],))
        assert _matches(owner_conn, tenant["id"], "ZX-400 locker") == {ours}
        raise psycopg.Rollback()


def test_hyphenated_words_and_addresses_are_matched_as_the_lexemes_they_are(
    client: Any, tenant: dict[str, Any]
) -> None:
    """A query lexeme is matched whole: parsed again, "co-founder" or a URL became a phrase of
    its parts that no stored text held, and the memory that says it never testified."""
    founder = _remember(client, tenant, "Our co-founder signed the lease for the new office.")
    docs = _remember(client, tenant, "The setup guide at https://example.com/docs/v2 is new.")
    _remember(client, tenant, "The office lease runs until March.")
    for mode in ("keyword", "hybrid"):  # the database's keyword list, and the one ranked here
        for query, wanted in (("who is the co-founder?", founder),
                              ("https://example.com/docs/v2", docs)):
            response = client.post("/v1/recall", headers=tenant["app"], json={
                "subject": SUBJECT, "query": query, "mode": mode, "limit": 1})
            assert response.status_code == 200, response.text
            assert [r["memory"]["id"] for r in response.json()["results"]] == [wanted], (
                mode, query)
