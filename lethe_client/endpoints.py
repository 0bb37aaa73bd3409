"""Every endpoint of API.md as a `Call`: path, body and answer shape, written once.

The sync and async resources (`resources.py`, `aresources.py`) only name these. Sessions,
working memory, `/v1/memories/batch` and `/compat/mem0` are not here yet: they join as more
functions of this module and one method each in the resources.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from lethe_client import models as m
from lethe_client.call import Call, adapted, body, document, model, nothing, params
from lethe_client.requests import (
    IngestMemory,
    IngestMessage,
    LegalHoldCreate,
    MemoryFields,
    MemoryPatch,
    SettingsPatch,
)

Id = UUID | str
Written = m.MemoryWritten | m.ForgetRequestHandled


def _written(response: Any) -> Written:
    value: Written = adapted(Written)(response)
    value.replayed = response.headers.get("idempotent-replayed") == "true"
    return value


def _wire(values: Any) -> dict[str, Any]:
    """A body's or query's values with each time as RFC 3339 text (JSON has no time type)."""
    return {name: value.isoformat() if isinstance(value, datetime) else value
            for name, value in dict(values).items()}


def if_match(revision: int) -> dict[str, str]:
    return {"If-Match": f'"{revision}"'}


def page(cls: type[Any]) -> Any:
    return adapted(m.Page[cls])  # type: ignore[valid-type]


# Memories


def create_memory(subject: str, text: str, fields: MemoryFields,
                  idempotency_key: str | None) -> Call[Written]:
    return Call("POST", "/v1/memories", _written, json={"subject": subject, "text": text,
                                                        **_wire(fields)},
                idempotency_key=idempotency_key)


def get_memory(memory_id: Id, as_of: datetime | str | None = None) -> Call[m.Memory]:
    return Call("GET", f"/v1/memories/{memory_id}", model(m.Memory),
                params=_wire(params(as_of=as_of)))


def list_memories(subject: str | None, state: str | None, key: str | None,
                  source: str | None, limit: int | None, cursor: str | None,
                  ) -> Call[m.Page[m.Memory]]:
    return Call("GET", "/v1/memories", page(m.Memory),
                params=params(subject=subject, state=state, key=key, source=source,
                              limit=limit, cursor=cursor))


def correct_memory(memory_id: Id, revision: int, patch: MemoryPatch) -> Call[m.Memory]:
    return Call("PATCH", f"/v1/memories/{memory_id}", model(m.Memory), json=_wire(patch),
                headers=if_match(revision))


def revert_memory(memory_id: Id, revision: int, seq: int) -> Call[m.Memory]:
    return Call("POST", f"/v1/memories/{memory_id}/revert", model(m.Memory),
                json={"seq": seq}, headers=if_match(revision))


def review_memory(memory_id: Id, revision: int | None, action: str) -> Call[m.Memory]:
    """confirm, reject, quarantine or release (re-validation and the quarantine queue)."""
    return Call("POST", f"/v1/memories/{memory_id}/{action}", model(m.Memory),
                headers=if_match(revision) if revision is not None else {})


def forget_memory(memory_id: Id, delete: bool, exclude_source: bool, about: str | None,
                  reason: str | None) -> Call[m.ForgetResult]:
    return Call("POST", f"/v1/memories/{memory_id}/forget", model(m.ForgetResult),
                json=body(delete=delete, exclude_source=exclude_source, about=about,
                          reason=reason))


def delete_memory(memory_id: Id) -> Call[None]:
    return Call("DELETE", f"/v1/memories/{memory_id}", nothing)


def memory_versions(memory_id: Id) -> Call[list[m.Version]]:
    parse = adapted(m.Page[m.Version])
    return Call("GET", f"/v1/memories/{memory_id}/versions",
                lambda response: parse(response).data)


def memory_lineage(memory_id: Id) -> Call[m.Lineage]:
    return Call("GET", f"/v1/memories/{memory_id}/lineage", model(m.Lineage))


# Recall, forgetting, ingestion, dependencies, operations


def recall(subject: str, query: str, limit: int | None, include_suspect: bool | None,
           mode: str | None, as_of: datetime | str | None = None) -> Call[m.RecallResponse]:
    return Call("POST", "/v1/recall", model(m.RecallResponse),
                json=_wire(body(subject=subject, query=query, limit=limit,
                                include_suspect=include_suspect, mode=mode, as_of=as_of)))


def forget_described(subject: str, about: str, delete: bool | None,
                     exclude_source: bool | None, dry_run: bool | None,
                     max_targets: int | None) -> Call[m.DescribeResult]:
    return Call("POST", "/v1/forget", model(m.DescribeResult),
                json=body(subject=subject, about=about, delete=delete,
                          exclude_source=exclude_source, dry_run=dry_run,
                          max_targets=max_targets))


def ingest(subject: str, source: str | None, memories: list[IngestMemory] | None,
           messages: list[IngestMessage] | None,
           idempotency_key: str | None) -> Call[m.OperationAccepted]:
    return Call("POST", "/v1/ingest", model(m.OperationAccepted),
                json=body(subject=subject, source=source, memories=memories,
                          messages=messages), idempotency_key=idempotency_key)


def get_operation(operation_id: Id) -> Call[m.Operation]:
    return Call("GET", f"/v1/operations/{operation_id}", model(m.Operation))


def put_dependency(key: str, value: str) -> Call[m.DependencyChanged]:
    return Call("PUT", f"/v1/dependencies/{key}", model(m.DependencyChanged),
                json={"value": value})


def list_dependencies() -> Call[m.Page[m.Dependency]]:
    return Call("GET", "/v1/dependencies", page(m.Dependency))


def run_maintenance(job: str) -> Call[m.OperationAccepted]:
    return Call("POST", f"/v1/maintenance/{job}", model(m.OperationAccepted))


# Settings, sources, audit


def get_settings() -> Call[m.Settings]:
    return Call("GET", "/v1/settings", model(m.Settings))


def patch_settings(patch: SettingsPatch) -> Call[m.Settings]:
    return Call("PATCH", "/v1/settings", model(m.Settings), json=dict(patch))


def exclude_source(source: str, reason: str | None) -> Call[m.Exclusion]:
    return Call("POST", "/v1/sources/exclusions", model(m.Exclusion),
                json=body(source=source, reason=reason))


def list_exclusions(limit: int | None, cursor: str | None) -> Call[m.Page[m.Exclusion]]:
    return Call("GET", "/v1/sources/exclusions", page(m.Exclusion),
                params=params(limit=limit, cursor=cursor))


def delete_exclusion(exclusion_id: Id) -> Call[None]:
    return Call("DELETE", f"/v1/sources/exclusions/{exclusion_id}", nothing)


def list_audit(target_id: str | None, action: str | None, since: str | None,
               limit: int | None, cursor: str | None) -> Call[m.Page[m.AuditEvent]]:
    return Call("GET", "/v1/audit", page(m.AuditEvent),
                params=params(target_id=target_id, action=action, since=since, limit=limit,
                              cursor=cursor))


def verify_audit() -> Call[m.AuditVerification]:
    return Call("GET", "/v1/audit/verify", model(m.AuditVerification))


# Compliance: erasure, access, holds, artifacts, webhooks, keys, staff


def file_erasure(subject: str, reason: str | None,
                 requested_by: str | None) -> Call[m.ErasureFiled]:
    return Call("POST", "/v1/erasure-requests", model(m.ErasureFiled),
                json=body(subject=subject, reason=reason, requested_by=requested_by))


def get_erasure(request_id: Id) -> Call[m.ErasureRequest]:
    return Call("GET", f"/v1/erasure-requests/{request_id}", model(m.ErasureRequest))


def list_erasures(status: str | None, subject: str | None, limit: int | None,
                  cursor: str | None) -> Call[m.Page[m.ErasureRequest]]:
    return Call("GET", "/v1/erasure-requests", page(m.ErasureRequest),
                params=params(status=status, subject=subject, limit=limit, cursor=cursor))


def act_on_erasure(request_id: Id, action: str) -> Call[m.ErasureRequest]:
    """approve or cancel."""
    return Call("POST", f"/v1/erasure-requests/{request_id}/{action}",
                model(m.ErasureRequest))


def erasure_receipt(request_id: Id) -> Call[m.Receipt]:
    return Call("GET", f"/v1/erasure-requests/{request_id}/receipt", model(m.Receipt))


def receipt_public_key() -> Call[m.PublicKey]:
    return Call("GET", "/v1/receipts/public-key", model(m.PublicKey))


def file_access_request(subject: str) -> Call[m.OperationAccepted]:
    return Call("POST", "/v1/access-requests", model(m.OperationAccepted),
                json={"subject": subject})


def access_export(request_id: Id) -> Call[m.AccessExport]:
    return Call("GET", f"/v1/access-requests/{request_id}/export", model(m.AccessExport))


def place_hold(hold: LegalHoldCreate) -> Call[m.LegalHold]:
    return Call("POST", "/v1/legal-holds", model(m.LegalHold), json=dict(hold))


def get_hold(hold_id: Id) -> Call[m.LegalHold]:
    return Call("GET", f"/v1/legal-holds/{hold_id}", model(m.LegalHold))


def list_holds(active: bool | None, limit: int | None,
               cursor: str | None) -> Call[m.Page[m.LegalHold]]:
    return Call("GET", "/v1/legal-holds", page(m.LegalHold),
                params=params(active=None if active is None else str(active).lower(),
                              limit=limit, cursor=cursor))


def release_hold(hold_id: Id, reason: str | None = None) -> Call[None]:
    return Call("DELETE", f"/v1/legal-holds/{hold_id}", nothing, params=params(reason=reason))


def register_artifact(kind: str, ref: str, derived_from: list[str]) -> Call[m.Artifact]:
    return Call("POST", "/v1/artifacts", model(m.Artifact),
                json={"kind": kind, "ref": ref, "derived_from": derived_from})


def get_artifact(artifact_id: Id) -> Call[m.Artifact]:
    return Call("GET", f"/v1/artifacts/{artifact_id}", model(m.Artifact))


def list_artifacts(derived_from: str | None, status: str | None, limit: int | None,
                   cursor: str | None) -> Call[m.Page[m.Artifact]]:
    return Call("GET", "/v1/artifacts", page(m.Artifact),
                params=params(derived_from=derived_from, status=status, limit=limit,
                              cursor=cursor))


def artifact_erased(artifact_id: Id) -> Call[m.Artifact]:
    return Call("POST", f"/v1/artifacts/{artifact_id}/erased", model(m.Artifact))


def delete_artifact(artifact_id: Id) -> Call[None]:
    return Call("DELETE", f"/v1/artifacts/{artifact_id}", nothing)


def create_webhook(url: str, events: list[str]) -> Call[m.WebhookCreated]:
    return Call("POST", "/v1/webhooks", model(m.WebhookCreated),
                json={"url": url, "events": events})


def get_webhook(webhook_id: Id) -> Call[m.Webhook]:
    return Call("GET", f"/v1/webhooks/{webhook_id}", model(m.Webhook))


def list_webhooks(limit: int | None, cursor: str | None) -> Call[m.Page[m.Webhook]]:
    return Call("GET", "/v1/webhooks", page(m.Webhook), params=params(limit=limit,
                                                                      cursor=cursor))


def webhook_deliveries(webhook_id: Id, limit: int | None,
                       cursor: str | None) -> Call[m.Page[m.Delivery]]:
    return Call("GET", f"/v1/webhooks/{webhook_id}/deliveries", page(m.Delivery),
                params=params(limit=limit, cursor=cursor))


def delete_webhook(webhook_id: Id) -> Call[None]:
    return Call("DELETE", f"/v1/webhooks/{webhook_id}", nothing)


def create_api_key(role: str) -> Call[m.ApiKeyCreated]:
    return Call("POST", "/v1/api-keys", model(m.ApiKeyCreated), json={"role": role})


def list_api_keys(limit: int | None, cursor: str | None) -> Call[m.Page[m.ApiKey]]:
    return Call("GET", "/v1/api-keys", page(m.ApiKey), params=params(limit=limit,
                                                                    cursor=cursor))


def revoke_api_key(key_id: Id) -> Call[None]:
    return Call("DELETE", f"/v1/api-keys/{key_id}", nothing)


def add_staff(email: str, role: str, password: str | None) -> Call[m.StaffCreated]:
    return Call("POST", "/v1/staff", model(m.StaffCreated),
                json=body(email=email, role=role, password=password))


def list_staff(limit: int | None, cursor: str | None) -> Call[m.Page[m.StaffMember]]:
    return Call("GET", "/v1/staff", page(m.StaffMember), params=params(limit=limit,
                                                                      cursor=cursor))


def change_staff_role(staff_id: Id, role: str) -> Call[m.StaffMember]:
    return Call("PATCH", f"/v1/staff/{staff_id}", model(m.StaffMember), json={"role": role})


def remove_staff(staff_id: Id) -> Call[None]:
    return Call("DELETE", f"/v1/staff/{staff_id}", nothing)


def create_tenant(name: str) -> Call[m.TenantCreated]:
    return Call("POST", "/v1/tenants", model(m.TenantCreated), json={"name": name})


def health(path: str) -> Call[dict[str, Any]]:
    return Call("GET", path, document)
