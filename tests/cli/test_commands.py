"""`lethe tenants`, `import`, `export`, `audit verify` and `doctor` on the test database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.cli.data import line_key


def lethe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], env=dict(os.environ),
                          capture_output=True, text=True, timeout=300)


def test_tenants_create_prints_keys_and_list_shows_it(capsys: pytest.CaptureFixture[str],
                                                      client: Any) -> None:
    assert main(["tenants", "create", "--name", "Initech"]) == 0
    created = capsys.readouterr().out
    tenant_id = created.split("tenant ", 1)[1].split()[0]
    app_key = created.split("app key (shown once): ", 1)[1].split()[0]
    assert client.get("/v1/settings",
                      headers={"Authorization": f"Bearer {app_key}"}).status_code == 200
    assert main(["tenants", "list", "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {"id": tenant_id, "name": "Initech"} in [
        {"id": row["id"], "name": row["name"]} for row in listed]


def test_import_is_batched_and_a_rerun_skips_what_landed(
    server: str, keys: dict[str, Any], tmp_path: Path, owner_conn: Any,
) -> None:
    lines = [json.dumps({"subject": "user:imp", "text": f"Imported fact {n} is here."})
             for n in range(5)]
    lines.insert(2, '{"subject": "user:imp"}')  # no text: reported, the rest still lands
    source = tmp_path / "memories.jsonl"
    source.write_text("\n".join(lines[:4]) + "\n")
    env_args = ["--url", server, "--api-key", keys["app"], "--batch-size", "2"]
    first = lethe("import", str(source), *env_args)
    assert first.returncode == 1 and "line 3" in first.stderr, first.stderr
    assert "3 stored, 0 already there, 1 failed" in first.stdout
    source.write_text("\n".join(lines) + "\n")  # the interrupted file, complete this time
    second = lethe("import", str(source), *env_args)
    assert "2 stored, 3 already there, 1 failed" in second.stdout, second.stdout
    count = owner_conn.execute("SELECT count(*) FROM memory WHERE tenant_id = %s",
                               (keys["id"],)).fetchone()[0]
    assert count == 5
    assert line_key(1, lines[0]) == line_key(1, lines[0] + "\n") != line_key(2, lines[0])


def test_export_writes_the_access_request_format(
    client: Any, tenant: dict[str, Any], tmp_path: Path
) -> None:
    client.post("/v1/memories", headers=tenant["app"],
                json={"subject": "user:exp", "text": "I like green tea."})
    client.post("/v1/memories", headers=tenant["app"],
                json={"subject": "user:other", "text": "I like coffee."})
    output = tmp_path / "export.json"
    done = lethe("export", "--subject", "user:exp", "--tenant", tenant["id"],
                 "--output", str(output))
    assert done.returncode == 0, done.stderr
    document = json.loads(output.read_text())
    assert document["subject"] == "user:exp" and document["counts"]["memories"] == 1
    assert [v["text"] for v in document["memories"][0]["versions"]] == ["I like green tea."]
    assert "coffee" not in output.read_text()
    assert lethe("export", "--subject", "x", "--tenant", "nope").returncode == 2


def test_audit_verify_passes_and_fails_on_a_broken_chain(
    client: Any, tenant: dict[str, Any], owner_conn: Any
) -> None:
    client.patch("/v1/settings", headers=tenant["compliance"],
                 json={"detect_forget_requests": True})
    ok = lethe("audit", "verify", "--tenant", tenant["id"])
    assert ok.returncode == 0 and ok.stdout.startswith("OK"), ok.stdout + ok.stderr
    owner_conn.execute("ALTER TABLE audit_event DISABLE TRIGGER USER")
    try:
        owner_conn.execute("UPDATE audit_event SET actor = 'forged' WHERE tenant_id = %s",
                           (tenant["id"],))
    finally:
        owner_conn.execute("ALTER TABLE audit_event ENABLE TRIGGER USER")
    broken = lethe("audit", "verify", "--tenant", tenant["id"])
    assert broken.returncode == 1 and broken.stdout.startswith("FAILED"), broken.stdout


def test_doctor_reports_each_check_and_fails_when_one_does() -> None:
    healthy = lethe("doctor", "--min-free-gb", "0")
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    for name in ("database", "pgvector", "migrations", "broker", "key store", "model", "disk"):
        assert f"ok    {name}: " in healthy.stdout
    assert "PostgreSQL 18" in healthy.stdout and "pgvector 0." in healthy.stdout
    short = lethe("doctor", "--min-free-gb", "1000000")
    assert short.returncode == 1 and "FAIL  disk: " in short.stdout
