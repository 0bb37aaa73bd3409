"""The console's Jinja2 environment (autoescaping on: every page shows tenant-chosen text).

Every template gets ``csrf_field`` (the hidden input each form must include) and
``csrf_token`` (for a header an htmx request sends instead), and two filters every page uses:
``moment`` (a time a person reads, its ISO value in a tooltip) and ``who`` (an audit actor by
name, from the ``actors`` a page resolved with `console.actors.resolve`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates
from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import Markup, escape

from console import actors, csrf

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"


def _csrf_context(request: Request) -> dict[str, Any]:
    return {"csrf_field": csrf.field_for(request), "csrf_token": csrf.token_for(request)}


def moment(value: datetime | str | None) -> Markup:
    """``4 Dec 2026, 13:22 UTC`` in a ``<time>`` whose ``datetime`` and ``title`` hold the
    exact ISO value; a dash for no time. Strings (a receipt's fields) are parsed first."""
    if value is None or value == "":
        return Markup("—")
    when = datetime.fromisoformat(value) if isinstance(value, str) else value
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    exact = escape(when.isoformat())
    shown = f"{when.day} {when:%b %Y, %H:%M} UTC"
    return Markup(f'<time datetime="{exact}" title="{exact}">{shown}</time>')


@pass_context
def who(context: Context, actor: str | None) -> Markup:
    """An audit actor as a person reads it, the recorded value in a tooltip."""
    if not actor:
        return Markup('<span class="actor">unknown</span>')
    names: dict[str, str] = context.get(actors.CONTEXT_KEY) or {}
    name = names.get(actor) or actors.unresolved(actor)
    return Markup(f'<span class="actor" title="{escape(actor)}">{escape(name)}</span>')


templates = Jinja2Templates(directory=HERE / "templates", context_processors=[_csrf_context])
templates.env.filters["moment"] = moment
templates.env.filters["who"] = who
