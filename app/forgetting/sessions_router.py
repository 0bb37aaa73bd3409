"""`POST /v1/sessions/{session}/close`: end an agent run, evicting its working memories."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from app.api import route
from app.api.deps import AppWriter, SessionDep
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.forgetting import sessions
from app.forgetting.schemas import SessionClosed

router = APIRouter(
    tags=["sessions"], route_class=route.LetheRoute, responses=problem_responses(*COMMON_PROBLEMS)
)
# `session` in the path, as docs/api.md names it; `name` here, beside the database session.
SessionName = Annotated[str, Path(alias="session", min_length=1, max_length=255,
                                  pattern=r"^[^\x00]*$",
                                  description="The agent run, as memories name it.")]


# An agent serving one user closes only that user's part of a run whose name another
# subject's agent may share (`lethe mcp --subject`).
SubjectFilter = Annotated[str | None, Query(
    min_length=1, max_length=255, pattern=r"^[^\x00]*$",
    description="Close only this subject's memories of the run; the rest stay untouched.")]


@router.post("/v1/sessions/{session}/close")
def close_session(name: SessionName, principal: AppWriter, session: SessionDep,
                  subject: SubjectFilter = None) -> SessionClosed:
    """Close an agent run: its working memories are forgotten unless promoted or held."""
    closed = sessions.close(session, tenant_id=principal.tenant_id, name=name,
                            subject=subject, actor=audit.actor_for(principal))
    return sessions.public(closed)
