"""`POST /v1/forget`: forget what a description names."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from app.api import route
from app.api.deps import AppWriter, SessionDep
from app.audit import service as audit
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.embeddings.runtime import embedder
from app.forgetting import describe
from app.forgetting.schemas import DescribeBody, DescribeResult

router = APIRouter(
    tags=["forgetting"], route_class=route.LetheRoute, responses=problem_responses(*COMMON_PROBLEMS)
)


def _planned(body: DescribeBody, principal: AppWriter) -> describe.Plan:
    return describe.prepare(
        tenant_id=principal.tenant_id, subject=body.subject, about=body.about,
        delete=body.delete, exclude_source=body.exclude_source, dry_run=body.dry_run,
        max_targets=body.max_targets, actor=audit.actor_for(principal), embed=embedder().embed,
    )


# Listed before the session: the plan and its embeddings are ready before it opens. A dry run
# opens it too, so its Idempotency-Key is claimed and its answer replayable.
Planned = Annotated[describe.Plan, Depends(_planned)]


@router.post("/v1/forget")
def forget_by_description(
    body: DescribeBody, principal: AppWriter, plan: Planned, session: SessionDep
) -> DescribeResult:
    """Forget by description: whole memories about it, or just the sentences mentioning it."""
    return describe.public(describe.apply(session, plan))
