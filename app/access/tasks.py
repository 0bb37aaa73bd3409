"""The access request task: builds one subject's export, once in effect."""

from __future__ import annotations

import logging
import uuid

from app.access import service
from app.core import uow
from app.core.celery_app import celery_app
from app.core.models import utcnow

log = logging.getLogger(__name__)


@celery_app.task(name=service.EXPORT_TASK, acks_late=True)
def export(operation_id: str, tenant_id: str) -> bool:
    """Build the export of ``operation_id``; False when a delivery already finished it.

    A worker killed mid-export leaves nothing committed but `running`, and the redelivery
    builds it whole; one killed after the commit is redelivered to a finished operation.
    """
    operation, tenant = uuid.UUID(operation_id), uuid.UUID(tenant_id)
    try:
        with uow.unit_of_work(tenant) as session:
            if not service.start(session, tenant_id=tenant, operation_id=operation):
                return False
        with uow.unit_of_work(tenant) as session:
            return service.run(session, tenant_id=tenant, operation_id=operation,
                               now=utcnow())
    except Exception as exc:
        # Only the class name: database error messages quote parameters (the subject).
        log.error("access request %s failed (%s)", operation, type(exc).__name__)
        with uow.unit_of_work(tenant) as session:
            service.fail(session, tenant_id=tenant, operation_id=operation, exc=exc)
        return False
