"""The text package stands alone: no database, no web framework, no domain package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Process settings (the judge's endpoint) are the one part of the application it reads.
ALLOWED_APP_MODULES = {"app", "app.core", "app.core.config"}
FORBIDDEN_LIBRARIES = {"sqlalchemy", "sqlmodel", "psycopg", "psycopg_pool", "fastapi",
                       "starlette", "celery", "redis"}


def test_importing_every_text_module_loads_nothing_else_of_the_service() -> None:
    # A fresh interpreter: this one has long since imported the whole application.
    program = (
        "import importlib, pkgutil, sys, app.text\n"
        "for module in pkgutil.iter_modules(app.text.__path__):\n"
        "    importlib.import_module(f'app.text.{module.name}')\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.split()
    assert "app.text.detector" in loaded and "app.text.judge" in loaded
    service = [name for name in loaded if name.partition(".")[0] == "app"
               and not name.startswith("app.text") and name not in ALLOWED_APP_MODULES]
    libraries = [name for name in loaded if name.partition(".")[0] in FORBIDDEN_LIBRARIES]
    assert service == [] and libraries == []
