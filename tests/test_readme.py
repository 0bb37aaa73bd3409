"""The README's curl session, run as written against a live `lethe serve`.

Its shell blocks run in order in one bash, from a folder whose `.lethe` is the server's data
folder (as `scripts/serve` leaves it), with `localhost:8000` pointed at the server's port. `curl`
is wrapped only to note each answer's status on stderr, which the test compares with the
statuses the session should meet.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.runtime import get_runtime
from app.receipts import offline
from tests.live_serve import free_port, stop, wait_until_ready

README = Path(__file__).resolve().parents[1] / "README.md"
SESSION = "## A first session with curl"
STATUS = "README-STATUS"

# (method, path, status) of every request the session sends, in order; None: any ID there.
EXPECTED = [
    ("POST", "/v1/tenants", 201),
    ("GET", "/v1/settings", 200),
    ("PATCH", "/v1/settings", 200),
    ("PATCH", "/v1/settings", 200),  # replayed
    ("PATCH", "/v1/settings", 422),  # the same key with another body
    ("POST", "/v1/memories", 201),
    ("POST", "/v1/recall", 200),
    ("POST", "/v1/forget", 200),
    ("DELETE", "/v1/memories/{id}", 204),
    ("POST", "/v1/recall", 200),
    ("POST", "/v1/memories", 201),
    ("POST", "/v1/memories", 201),
    ("GET", "/v1/memories/{id}/lineage", 200),
    ("PATCH", "/v1/settings", 200),
    ("POST", "/v1/memories", 200),  # a forget request, handled
    ("POST", "/v1/maintenance/retention", 202),
    ("POST", "/v1/ingest", 202),
    ("POST", "/v1/erasure-requests", 202),
    ("GET", "/v1/erasure-requests/{id}/receipt", 200),
    ("GET", "/v1/receipts/public-key", 200),
]
POLL = ("GET", "/v1/operations/{id}", 200)
ERASURE_POLL = ("GET", "/v1/erasure-requests/{id}", 200)


def session_blocks(text: str) -> list[str]:
    """The ```sh blocks of the README's curl session, in order."""
    start = text.index(SESSION)
    end = text.find("\n## ", start + len(SESSION))
    section = text[start:end if end != -1 else len(text)]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)


def _path(url: str) -> str:
    path = "/" + url.split("/", 3)[3].split("?")[0]
    return re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "{id}", path)


def test_session_blocks_are_found() -> None:
    blocks = session_blocks(README.read_text())
    assert len(blocks) >= 6 and "MEMORY_ID=" in "".join(blocks)
    assert "scripts/serve" not in "".join(blocks), "the serve command is not part of the session"


@pytest.mark.slow
def test_the_readme_curl_session_runs_as_written(tmp_path: Path) -> None:
    runtime = get_runtime()
    port = free_port()
    env = {key: value for key, value in os.environ.items()
           if key not in ("LETHE_ADMIN_TOKEN", "LETHE_SECRET_KEY")}
    # The test database, and a data folder of the session's own, where the generated admin
    # token is kept as `scripts/serve` keeps it.
    env.update({"DATABASE_URL": runtime.owner_url, "LETHE_APP_DATABASE_URL": runtime.app_url,
                "LETHE_DATA_DIR": str(tmp_path / ".lethe")})
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port),
             "--worker-concurrency", "1"],
            env=env, stdout=out, stderr=subprocess.STDOUT, text=True,
        )
    try:
        wait_until_ready(f"http://127.0.0.1:{port}", server, log)
        script = "\n".join(session_blocks(README.read_text()))
        script = script.replace("localhost:8000", f"127.0.0.1:{port}")
        prelude = (
            "set -e\n"
            f"curl() {{ command curl --write-out '%{{stderr}}{STATUS} %{{method}} "
            "%{url_effective} %{http_code}\\n' \"$@\"; }\n"
        )
        # `mktemp -d` makes the session's temporary folder here, where the test finds it.
        temporary = tmp_path / "tmp"
        temporary.mkdir()
        bash_env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TMPDIR": str(temporary)}
        ran = subprocess.run(["bash", "-c", prelude + script], cwd=tmp_path, env=bash_env,
                             capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        answers = [line.split()[1:] for line in ran.stderr.splitlines()
                   if line.startswith(STATUS)]
        seen = [(method, _path(url), int(status)) for method, url, status in answers]
        for poll in (POLL, ERASURE_POLL):
            polls = [entry for entry in seen if entry[:2] == poll[:2]]
            assert polls and set(polls) == {poll}, ran.stderr
        rest = [entry for entry in seen if entry[:2] not in (POLL[:2], ERASURE_POLL[:2])]
        assert rest == EXPECTED, ran.stderr
        output = ran.stdout
        assert "idempotent-replayed: true" in output.lower()
        fact = re.findall(r'"id":"([^"]+)","subject":"user:42","text":"I moved', output)[0]
        assert f'"forgotten":["{fact}"]' in output, "the description resolves to the fact"
        assert '{"results":[],"retractions":[{' in output, "recall: nothing, and a retraction"
        assert '"contradicted_by":"' in output, "the lineage names the correction"
        assert '"stored":false' in output, "the forget request was handled, not stored"
        assert '"status":"succeeded"' in output, "the ingestion was applied"
        assert not list(tmp_path.glob("receipt*")), "the receipts land in the working folder"
        [folder] = [path.parent for path in temporary.glob("*/receipt.json")]
        receipt = json.loads((folder / "receipt.json").read_text())
        assert receipt["status"] == "completed" and receipt["counts"]["memories"] >= 1
        key = json.loads((folder / "receipt-key.json").read_text())
        assert offline.verify_text((folder / "receipt.json").read_text(), key).ok
    finally:
        stop(server)
