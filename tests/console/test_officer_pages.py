"""What a compliance officer reads over HTTP: actors as people, readable times, the whole
provenance component, erasures found by subject, a quarantine decision with nothing chosen."""

from __future__ import annotations

import re
import uuid
from typing import Any

from tests.console.records_support import csrf_of, quarantine, remember, sign_in
from tests.erasure.helpers import run

ACTOR = re.compile(r'<span class="actor" title="([^"]+)">([^<]*)</span>')
TIME = re.compile(r'<time datetime="([^"]+)" title="([^"]+)">(\d{1,2} [A-Z][a-z]{2} \d{4}, '
                  r'\d\d:\d\d UTC)</time>')
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _officer_email(owner_conn: Any, tenant: dict[str, Any]) -> str:
    row = owner_conn.execute("SELECT email FROM staff WHERE tenant_id = %s "
                             "ORDER BY created_at DESC LIMIT 1", (tenant["id"],)).fetchone()
    email: str = row[0]
    return email


def _actors(html: str) -> dict[str, str]:
    """Recorded actor → what the page shows for it."""
    return dict(ACTOR.findall(html))


def test_audit_page_shows_staff_by_email_and_keys_by_role_and_prefix(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    client.post("/v1/legal-holds", json={"subject": "user:9", "reason": "case"},
                headers=tenant["compliance"])
    sign_in(client, tenant)
    page = client.get("/console/audit").text
    shown = _actors(page)
    email = _officer_email(owner_conn, tenant)
    staff = [name for actor, name in shown.items() if actor.startswith("staff:")]
    keys = [name for actor, name in shown.items() if actor.startswith("key:")]
    assert email in staff
    assert keys and all(re.fullmatch(r"compliance key lethe_[0-9a-f]{8}…", name) for name in keys)
    assert not any(UUID.search(name) for name in shown.values())
    table = page.split('id="audit-events"')[1]
    # Every actor cell is a resolved name; no cell shows a recorded actor as it is stored.
    assert not re.search(r"<td>(<code>)?(staff|key):", table)
    times = TIME.findall(table)
    assert times and all(iso == title for iso, title, _ in times)
    # A name is a link to the events of that actor alone.
    officer = next(actor for actor, name in shown.items() if name == email)
    mine = re.search(rf'<a href="(/console/audit\?actor={officer.replace(":", "%3A")})">', table)
    assert mine
    only = client.get(mine.group(1)).text.split('id="audit-events"')[1]
    assert set(_actors(only)) == {officer}


def test_actor_names_reach_lineage_holds_quarantine_and_tombstones(
    client: Any, tenant: dict[str, Any]
) -> None:
    memory = remember(client, tenant, "Prefers the night train")
    quarantine(client, tenant, memory)
    client.post("/v1/legal-holds", json={"subject": "user:42", "reason": "litigation"},
                headers=tenant["compliance"])
    gone = remember(client, tenant, "Old phone number", subject="user:5")
    client.post(f"/v1/memories/{gone}/forget", headers=tenant["app"],
                json={"reason": "asked"})
    sign_in(client, tenant)
    pages = {
        "lineage": client.get(f"/console/memories/{memory}").text,
        "holds": client.get("/console/holds").text,
        "quarantine": client.get("/console/quarantine").text,
        "tombstone": client.get(f"/console/memories/{gone}").text,
    }
    for name, html in pages.items():
        shown = _actors(html)
        assert shown, name
        labels = shown.values()
        assert all(re.match(r"(app|compliance) key lethe_", label) for label in labels), name
        assert TIME.search(html), name


def test_lineage_graph_walks_ancestors_and_descendants_over_several_hops(
    client: Any, tenant: dict[str, Any]
) -> None:
    grandparent = remember(client, tenant, "Said in March she was moving north", source="chat:7")
    parent = remember(client, tenant, "Moving to Porto", derived_from=[grandparent])
    memory = remember(client, tenant, "Lives in Porto", derived_from=[parent])
    child = remember(client, tenant, "Profile: based in Porto", derived_from=[memory])
    grandchild = remember(client, tenant, "Segment: northern customers",
                          derived_from=[child, grandparent])
    forgotten = remember(client, tenant, "Porto address: Rua das Flores 12",
                         derived_from=[child])
    client.post(f"/v1/memories/{forgotten}/forget", headers=tenant["app"],
                json={"reason": "asked"})
    sign_in(client, tenant)

    html = client.get(f"/console/memories/{memory}").text
    graph = html.split('id="provenance-graph"')[1].split("</svg>")[0]
    for other in (grandparent, parent, child, grandchild, forgotten):
        assert f"memory {other[:8]}…" in graph
    assert "source: chat:7" in graph
    assert "Moving to Porto" in graph and "Segment: northern customers" in graph
    assert "forgotten (tombstone)" in graph and "Rua das Flores" not in html
    # src→gp, gp→parent, parent→memory, memory→child, child→grandchild, gp→grandchild,
    # child→forgotten: every edge among the shown nodes.
    assert graph.count('class="graph__edge"') == 7
    nodes = html.split('id="component"')[1].split("</details>")[0]
    assert "2 up" in nodes and "2 down" in nodes and "3 up" in nodes
    assert "graph-more" not in html


def test_lineage_graph_is_capped_with_a_link_to_more(client: Any, tenant: dict[str, Any]) -> None:
    memory = remember(client, tenant, "Root fact")
    children = [remember(client, tenant, f"Derived fact {n}", derived_from=[memory])
                for n in range(4)]
    sign_in(client, tenant)
    capped = client.get(f"/console/memories/{memory}", params={"nodes": 3}).text
    graph = capped.split('id="provenance-graph"')[1].split("</svg>")[0]
    assert graph.count('class="graph__node ') == 3
    assert 'id="graph-more"' in capped and f"{memory}?nodes=200" in capped
    whole = client.get(f"/console/memories/{memory}").text
    assert 'id="graph-more"' not in whole
    assert all(f"memory {c[:8]}…" in whole for c in children)


def test_erasures_are_found_by_subject_even_once_completed(
    client: Any, tenant: dict[str, Any]
) -> None:
    remember(client, tenant, "Lives in Oslo")
    sign_in(client, tenant)
    token = csrf_of(client.get("/console/erasures").text)
    ids = {}
    for subject in ("user:42", "user:7"):
        filed = client.post("/console/erasures", data={"csrf_token": token, "subject": subject},
                            follow_redirects=False)
        ids[subject] = filed.headers["location"].rsplit("/", 1)[1]
    run(ids["user:42"], tenant["id"])
    done = client.get(f"/v1/erasure-requests/{ids['user:42']}",
                      headers=tenant["compliance"]).json()
    assert done["status"] == "completed" and done["subject"] is None

    found = client.get("/console/erasures", params={"subject": "user:42"}).text
    rows = found.split('id="erasures"')[1]
    assert ids["user:42"] in rows and ids["user:7"] not in rows
    assert 'value="user:42"' in found
    other = client.get("/console/erasures", params={"subject": " user:7 "}).text
    assert ids["user:7"] in other and ids["user:42"] not in other.split('id="erasures"')[1]
    # Exact match: a prefix or another case finds nothing.
    for near in ("user:4", "USER:42"):
        none = client.get("/console/erasures", params={"subject": near}).text
        assert "No erasure request for this subject." in none

    detail = client.get(f"/console/erasures/{ids['user:7']}").text
    history = detail.split('id="erasure-history"')[1]
    assert next(label for _, label in ACTOR.findall(history)).startswith("officer-")


def test_quarantine_forget_with_nothing_chosen_says_so_and_changes_nothing(
    client: Any, tenant: dict[str, Any]
) -> None:
    memory = remember(client, tenant, "Owns a red bicycle")
    quarantine(client, tenant, memory)
    sign_in(client, tenant)
    page = client.get("/console/quarantine").text
    assert 'id="quarantine-form" novalidate' in page  # the browser lets it reach us
    answer = client.post("/console/quarantine", data={
        "csrf_token": csrf_of(page), "action": "forget", "reason": ""})
    assert answer.status_code == 422
    assert "<html" in answer.text and 'id="quarantine-form"' in answer.text
    error = answer.text.split('id="quarantine-error"')[1].split("</div>")[0]
    assert "Nothing was chosen" in error and "nothing was changed" in error
    assert client.get(f"/v1/memories/{memory}", headers=tenant["app"]).json()[
        "state"] == "quarantined"
    assert str(uuid.UUID(memory)) in answer.text  # the queue is still there to choose from
