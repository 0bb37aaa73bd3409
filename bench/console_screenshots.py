"""The console's screenshots in docs/console/, taken from headless Chromium (a script, not a
test).

    .venv/bin/python bench/console_screenshots.py [--out docs/console]

Starts an embedded installation and a live API, seeds a small, realistic tenant through the
API and the console's own forms (a customer's memories derived over several hops, a
correction, a forgotten memory, a quarantined one, a legal hold placed by a compliance key and
released by an officer with a reason, erasures filed by the officer, one of them run to
completion), signs the officer in to Chromium and saves `lineage.png`, `erasures.png`,
`erasure.png` and `audit.png`. Needs /usr/bin/chromium and /usr/bin/chromedriver.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from bench.common import live_api, use_data_dir

PASSWORD = "screenshots password, long enough"
OFFICER = "dpo@acme-health.example"
ANA, BRUNO, CARLA = "customer:ana-ribeiro", "customer:bruno-costa", "customer:carla-mendes"
WIDTH = 1280
MAX_HEIGHT = 2400


def _keys() -> tuple[Any, dict[str, dict[str, str]]]:
    from app.core import uow
    from app.tenants import service
    from app.tenants.models import Role

    with uow.unit_of_work() as session:
        created = service.create_tenant(session, name="Acme Health")
    assert created.keys is not None
    return created.tenant.id, {
        role: {"Authorization": f"Bearer {created.keys[Role(role)]}"}
        for role in ("app", "compliance")}


def _ok(response: httpx.Response) -> Any:
    assert response.status_code < 400, (response.request.url, response.text)
    return response.json() if response.content else None


def _remember(api: httpx.Client, headers: dict[str, str], text: str, subject: str = ANA,
              **extra: Any) -> str:
    memory_id: str = _ok(api.post("/v1/memories", headers=headers,
                                  json={"subject": subject, "text": text, **extra}))["id"]
    return memory_id


def _seed_memories(api: httpx.Client, keys: dict[str, dict[str, str]]) -> str:
    """Ana's memories, derived over several hops; returns the one whose lineage is shown."""
    app, compliance = keys["app"], keys["compliance"]
    call = _remember(api, app, "Ana said on the phone she is moving to Porto in March for a "
                               "job at the São João hospital", source="call:2026-02-14")
    move = _remember(api, app, "Moving to Porto in March", derived_from=[call])
    home = _remember(api, app, "Lives in Lisbon and works as a nurse", key="home_city",
                     source="crm:contact/42", derived_from=[move])
    etag = api.get(f"/v1/memories/{home}", headers=app).headers["etag"]
    _ok(api.patch(f"/v1/memories/{home}", headers={**app, "If-Match": etag},
                  json={"text": "Lives in Porto and works as a senior nurse"}))
    profile = _remember(api, app, "Profile: senior nurse based in Porto", derived_from=[home])
    _remember(api, app, "Segment: healthcare professionals, northern region",
              derived_from=[profile, call])
    phone = _remember(api, app, "Mobile number ends in 4417", derived_from=[profile])
    _ok(api.post(f"/v1/memories/{phone}/forget", headers=app,
                 json={"reason": "customer asked to remove her number"}))
    _ok(api.post("/v1/artifacts", headers=app, json={
        "kind": "summary_row", "ref": "crm:contact/42", "derived_from": [profile]}))
    allergy = _remember(api, app, "Allergic to penicillin")
    _ok(api.post(f"/v1/memories/{allergy}/quarantine", headers=compliance))
    for text in ("Bruno asked for a callback about his invoice",
                 "Bruno prefers e-mail to phone calls"):
        _remember(api, app, text, subject=BRUNO)
    _remember(api, app, "Carla booked a check-up for May", subject=CARLA)
    return home


def _form(console: httpx.Client, page: str, path: str, data: dict[str, str]) -> httpx.Response:
    token = re.search(r'name="csrf_token" value="([^"]+)"', console.get(page).text)
    assert token, page
    response = console.post(path, data={**data, "csrf_token": token.group(1)})
    assert response.status_code in (200, 303), (path, response.status_code)
    return response


def _officer_decisions(base: str, tenant_id: Any, keys: dict[str, dict[str, str]]) -> str:
    """The officer releases a hold with a reason and files erasures; one runs to completion.
    Returns the completed request's ID."""
    from app.erasure import tasks

    with httpx.Client(base_url=base, timeout=120) as api:
        hold = _ok(api.post("/v1/legal-holds", headers=keys["compliance"], json={
            "subject": BRUNO, "reason": "Invoice dispute", "case_ref": "CASE-2026-031"}))
    with httpx.Client(base_url=base, timeout=120, follow_redirects=False) as console:
        _form(console, "/console/login", "/console/login",
              {"email": OFFICER, "password": PASSWORD})
        _form(console, f"/console/holds/{hold['id']}/release",
              f"/console/holds/{hold['id']}/release",
              {"reason": "Dispute settled; CASE-2026-031 closed"})
        filed = {}
        for subject, reason in ((BRUNO, "Right to erasure, e-mail of 2 Dec"),
                                (CARLA, "Right to erasure, web form")):
            answer = _form(console, "/console/erasures", "/console/erasures",
                           {"subject": subject, "reason": reason})
            filed[subject] = answer.headers["location"].rsplit("/", 1)[1]
    tasks.run(filed[BRUNO], str(tenant_id))
    return filed[BRUNO]


def _browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--no-first-run", "--disable-background-networking",
                     f"--window-size={WIDTH},900"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def _shoot(driver: Any, url: str, path: Path) -> None:
    driver.set_window_size(WIDTH, 900)
    driver.get(url)
    # The window's size includes what the browser draws around the page: grow it until the
    # viewport holds the whole page (or the cap).
    for _ in range(3):
        page, view, outer = driver.execute_script(
            "return [document.documentElement.scrollHeight, window.innerHeight,"
            " window.outerHeight]")
        if view >= page or outer >= MAX_HEIGHT:
            break
        driver.set_window_size(WIDTH, min(outer + page - view, MAX_HEIGHT))
    assert driver.save_screenshot(str(path)), path
    print(f"wrote {path}")


def _screenshots(base: str, out: Path, memory_id: str, erasure_id: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = _browser()
    try:
        driver.get(f"{base}/console/login")
        driver.find_element(By.ID, "email").send_keys(OFFICER)
        driver.find_element(By.ID, "password").send_keys(PASSWORD)
        driver.find_element(By.CSS_SELECTOR, "form.form button[type=submit]").click()
        WebDriverWait(driver, 30).until(lambda d: d.current_url.endswith("/console/"))
        _shoot(driver, f"{base}/console/memories/{memory_id}", out / "lineage.png")
        _shoot(driver, f"{base}/console/erasures?subject={BRUNO}", out / "erasures.png")
        _shoot(driver, f"{base}/console/erasures/{erasure_id}", out / "erasure.png")
        _shoot(driver, f"{base}/console/audit", out / "audit.png")
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parents[1] / "docs" / "console")
    args = parser.parse_args()
    use_data_dir(Path(tempfile.mkdtemp(prefix="lethe-console-screenshots-")))
    from app.core import migrations
    from app.core.runtime import get_runtime

    runtime = get_runtime()
    migrations.upgrade(runtime)
    tenant_id, keys = _keys()
    with live_api(runtime) as base:
        with httpx.Client(base_url=base, timeout=120) as api:
            _ok(api.post("/v1/staff", headers=keys["compliance"], json={
                "email": OFFICER, "role": "officer", "password": PASSWORD}))
            memory_id = _seed_memories(api, keys)
        erasure_id = _officer_decisions(base, tenant_id, keys)
        args.out.mkdir(parents=True, exist_ok=True)
        _screenshots(base, args.out, memory_id, erasure_id)


if __name__ == "__main__":
    main()
