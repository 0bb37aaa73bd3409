"""Who may call a route, declared once by the dependency that checks it.

Every API operation lists exactly one dependency carrying a declaration: a role dependency
(`AppReader`, `ComplianceWriter` …), the admin token, or `Public`. `LetheRoute` finds it to
authenticate a request before answering that its body is invalid (a caller without a valid key
learns nothing about the API from validation errors), and the authorization matrix in
`tests/api/` reads it to know what each operation must answer to each caller.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from fastapi import Request
from fastapi.dependencies.models import Dependant

ATTRIBUTE = "lethe_access"


class Access(StrEnum):
    public = "public"
    app = "app"
    compliance = "compliance"
    admin = "admin"


@dataclass(frozen=True)
class Declaration:
    access: Access
    # Authenticates and authorizes the request alone (reading only its headers), raising the
    # 401 or 403 it deserves; None for a public route.
    check: Callable[[Request], Awaitable[None]] | None


def declare(call: Any, access: Access, check: Callable[[Request], Awaitable[None]] | None) -> Any:
    """Mark the dependency ``call`` as the one that decides who may call its routes."""
    setattr(call, ATTRIBUTE, Declaration(access, check))
    return call


def declared(dependant: Dependant) -> list[Declaration]:
    """Every declaration in a route's dependency tree (one, for a well-formed route)."""
    found: list[Declaration] = []
    seen: set[int] = set()
    stack = [dependant]
    while stack:
        node = stack.pop()
        mark = getattr(node.call, ATTRIBUTE, None) if node.call is not None else None
        if isinstance(mark, Declaration) and id(node.call) not in seen:
            seen.add(id(node.call))
            found.append(mark)
        stack.extend(node.dependencies)
    return found


def public() -> None:
    """A route anyone may call (health probes, the receipts' public key)."""


declare(public, Access.public, None)
