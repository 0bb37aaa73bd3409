"""The SDK is also a light distribution: its wheel holds lethe_client and needs only httpx
and pydantic; nothing in it imports the server."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "lethe_client"


def test_the_client_wheel_builds_offline_and_depends_on_httpx_and_pydantic_only(
    tmp_path: Path,
) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(tmp_path), str(ROOT / "clients" / "python")],
        capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = tmp_path.glob("lethe_client-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = next(archive.read(n).decode() for n in names if n.endswith("METADATA"))
    requires = sorted(line.split(":", 1)[1].strip().split(">")[0].split("=")[0]
                      for line in metadata.splitlines() if line.startswith("Requires-Dist:"))
    assert requires == ["httpx", "pydantic"]
    packaged = {name.split("/")[0] for name in names if not name.startswith("lethe_client-")}
    assert packaged == {"lethe_client"}
    assert {f"lethe_client/{p.name}" for p in PACKAGE.glob("*.py")} <= set(names)


def test_the_client_imports_only_itself_httpx_pydantic_and_the_standard_library() -> None:
    allowed = {"lethe_client", "httpx", "pydantic", "pydantic_core", *sys.stdlib_module_names}
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                roots = {node.module.split(".")[0]}
            else:
                continue
            assert roots <= allowed, f"{path.name} imports {roots - allowed}"
