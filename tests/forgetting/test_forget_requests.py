"""A memory write that asks to forget is handled as forget-by-description when enabled."""

from __future__ import annotations

from typing import Any

from tests.forgetting.dump import database_text


def _remember(client: Any, headers: dict[str, str], text: str) -> Any:
    return client.post("/v1/memories", json={"subject": "user:5", "text": text}, headers=headers)


def _enable(client: Any, tenant: dict[str, Any]) -> None:
    response = client.patch("/v1/settings", json={"detect_forget_requests": True},
                            headers=tenant["compliance"])
    assert response.status_code == 200


def test_detected_request_forgets_and_stores_nothing(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    _enable(client, tenant)
    kept = _remember(client, tenant["app"], "I work as a nurse in Leeds.").json()
    gone = _remember(client, tenant["app"], "I collect rare Jordan sneakers.").json()
    handled = _remember(client, tenant["app"], "Please forget that I collect sneakers.")
    assert handled.status_code == 200, handled.text
    body = handled.json()
    assert body["stored"] is False and body["id"] is None
    retraction = body["effects"]["retraction"]
    assert retraction["forgotten"] == [gone["id"]] and retraction["retraction_id"]
    assert client.get(f"/v1/memories/{gone['id']}", headers=tenant["app"]).status_code == 404
    assert client.get(f"/v1/memories/{kept['id']}", headers=tenant["app"]).status_code == 200
    listed = client.get("/v1/memories?subject=user:5", headers=tenant["app"]).json()["data"]
    assert [m["id"] for m in listed] == [kept["id"]]
    recalled = client.post("/v1/recall", json={"subject": "user:5", "query": "sneakers"},
                           headers=tenant["app"]).json()
    assert [r["about"] for r in recalled["retractions"]] == ["that I collect sneakers"]
    dump = database_text(owner_conn)
    assert "Jordan" not in dump and "Please forget" not in dump


def test_requests_are_ordinary_text_when_detection_is_off(
    client: Any, tenant: dict[str, Any]
) -> None:
    stored = _remember(client, tenant["app"], "Please forget that I collect sneakers.")
    assert stored.status_code == 201
    assert stored.json()["text"] == "Please forget that I collect sneakers."


def test_reminders_and_self_reports_are_stored_even_when_detection_is_on(
    client: Any, tenant: dict[str, Any]
) -> None:
    _enable(client, tenant)
    for text in ("Don't forget my dentist appointment on Friday.",
                 "I always forget my keys.", "I'll forget that you live in Leeds."):
        response = _remember(client, tenant["app"], text)
        assert response.status_code == 201, text
