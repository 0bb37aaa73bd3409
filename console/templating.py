"""The console's Jinja2 environment (autoescaping on: every page shows tenant-chosen text).

Every template gets ``csrf_field`` (the hidden input each form must include) and
``csrf_token`` (for a header an htmx request sends instead).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates

from console import csrf

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"


def _csrf_context(request: Request) -> dict[str, Any]:
    return {"csrf_field": csrf.field_for(request), "csrf_token": csrf.token_for(request)}


templates = Jinja2Templates(directory=HERE / "templates", context_processors=[_csrf_context])
