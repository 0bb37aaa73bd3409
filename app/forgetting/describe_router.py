"""`POST /v1/forget`: forget what a description names."""

from __future__ import annotations

from fastapi import APIRouter

from app.audit import service as audit
from app.core import uow
from app.core.deps import AppWriter, WorkDep
from app.core.errors import COMMON_PROBLEMS, problem_responses
from app.embeddings.runtime import embedder
from app.forgetting import describe
from app.forgetting.schemas import DescribeBody, DescribeResult

router = APIRouter(
    tags=["forgetting"], route_class=uow.LetheRoute, responses=problem_responses(*COMMON_PROBLEMS)
)


@router.post("/v1/forget")
def forget_by_description(
    body: DescribeBody, principal: AppWriter, work: WorkDep
) -> DescribeResult:
    """Forget by description: whole memories about it, or just the sentences mentioning it."""
    outcome = describe.forget_by_description(
        work.open, tenant_id=principal.tenant_id, subject=body.subject, about=body.about,
        delete=body.delete, exclude_source=body.exclude_source, dry_run=body.dry_run,
        max_targets=body.max_targets, actor=audit.actor_for(principal), embed=embedder().embed,
    )
    return describe.public(outcome)
