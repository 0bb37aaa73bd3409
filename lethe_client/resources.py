"""The blocking client's resources: each method runs one call of `endpoints`."""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Unpack

from lethe_client import endpoints as e
from lethe_client import models as m
from lethe_client.requests import (
    IngestMemory,
    IngestMessage,
    LegalHoldCreate,
    MemoryFields,
    MemoryPatch,
    SettingsPatch,
)
from lethe_client.revisions import revision_of
from lethe_client.transport import SyncTransport


class Resource:
    def __init__(self, transport: SyncTransport) -> None:
        self._t = transport


class Memories(Resource):
    def create(self, subject: str, text: str, *, idempotency_key: str | None = None,
               **fields: Unpack[MemoryFields]) -> e.Written:
        """Remember; a `ForgetRequestHandled` when the text was a forget request."""
        return self._t.run(e.create_memory(subject, text, fields, idempotency_key))

    def get(self, memory_id: e.Id, *, as_of: datetime | str | None = None) -> m.Memory:
        """The memory; with ``as_of``, as it stood at that instant."""
        return self._t.run(e.get_memory(memory_id, as_of))

    def list(self, *, subject: str | None = None, state: str | None = None,
             key: str | None = None, source: str | None = None,
             page_size: int | None = None) -> Iterator[m.Memory]:
        return self._t.items(lambda cursor: e.list_memories(
            subject, state, key, source, page_size, cursor))

    def correct(self, memory: m.Memory | e.Id, *, revision: int | None = None,
                **patch: Unpack[MemoryPatch]) -> m.Memory:
        """PATCH with If-Match of the revision read: `PreconditionFailed` when stale."""
        return self._t.run(e.correct_memory(*revision_of(memory, revision), patch))

    def revert(self, memory: m.Memory | e.Id, seq: int, *,
               revision: int | None = None) -> m.Memory:
        return self._t.run(e.revert_memory(*revision_of(memory, revision), seq))

    def confirm(self, memory: m.Memory | e.Id, *, revision: int | None = None) -> m.Memory:
        return self._t.run(e.review_memory(*revision_of(memory, revision), "confirm"))

    def reject(self, memory: m.Memory | e.Id, *, revision: int | None = None) -> m.Memory:
        return self._t.run(e.review_memory(*revision_of(memory, revision), "reject"))

    def forget(self, memory_id: e.Id, *, delete: bool = True, exclude_source: bool = True,
               about: str | None = None, reason: str | None = None) -> m.ForgetResult:
        return self._t.run(e.forget_memory(memory_id, delete, exclude_source, about, reason))

    def delete(self, memory_id: e.Id) -> None:
        self._t.run(e.delete_memory(memory_id))

    def history(self, memory_id: e.Id) -> builtins.list[m.Version]:
        """Every version, oldest first."""
        return self._t.run(e.memory_versions(memory_id))

    def lineage(self, memory_id: e.Id) -> m.Lineage:
        return self._t.run(e.memory_lineage(memory_id))


class Operations(Resource):
    def get(self, operation_id: e.Id) -> m.Operation:
        return self._t.run(e.get_operation(operation_id))

    def wait(self, operation_id: e.Id, *, timeout: float = 60.0,
             interval: float = 0.25) -> m.Operation:
        """Poll until the operation succeeded or failed; TimeoutError past ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            operation = self.get(operation_id)
            if operation.done:
                return operation
            if time.monotonic() > deadline:
                raise TimeoutError(f"operation {operation_id} still {operation.status}")
            time.sleep(interval)


class Settings(Resource):
    def get(self) -> m.Settings:
        return self._t.run(e.get_settings())

    def update(self, **patch: Unpack[SettingsPatch]) -> m.Settings:
        return self._t.run(e.patch_settings(patch))


class Sources(Resource):
    def exclude(self, source: str, *, reason: str | None = None) -> m.Exclusion:
        return self._t.run(e.exclude_source(source, reason))

    def exclusions(self, *, page_size: int | None = None) -> Iterator[m.Exclusion]:
        return self._t.items(lambda cursor: e.list_exclusions(page_size, cursor))

    def include(self, exclusion_id: e.Id) -> None:
        self._t.run(e.delete_exclusion(exclusion_id))


class Dependencies(Resource):
    def put(self, key: str, value: str) -> m.DependencyChanged:
        return self._t.run(e.put_dependency(key, value))

    def list(self) -> Iterator[m.Dependency]:
        return self._t.items(lambda _cursor: e.list_dependencies())


class Audit(Resource):
    def list(self, *, target_id: str | None = None, action: str | None = None,
             since: str | None = None, page_size: int | None = None) -> Iterator[m.AuditEvent]:
        return self._t.items(lambda cursor: e.list_audit(target_id, action, since,
                                                         page_size, cursor))

    def verify(self) -> m.AuditVerification:
        return self._t.run(e.verify_audit())


class ErasureRequests(Resource):
    def create(self, subject: str, *, reason: str | None = None,
               requested_by: str | None = None) -> m.ErasureFiled:
        return self._t.run(e.file_erasure(subject, reason, requested_by))

    def get(self, request_id: e.Id) -> m.ErasureRequest:
        return self._t.run(e.get_erasure(request_id))

    def list(self, *, status: str | None = None, subject: str | None = None,
             page_size: int | None = None) -> Iterator[m.ErasureRequest]:
        return self._t.items(lambda cursor: e.list_erasures(status, subject, page_size,
                                                            cursor))

    def approve(self, request_id: e.Id) -> m.ErasureRequest:
        return self._t.run(e.act_on_erasure(request_id, "approve"))

    def cancel(self, request_id: e.Id) -> m.ErasureRequest:
        return self._t.run(e.act_on_erasure(request_id, "cancel"))

    def receipt(self, request_id: e.Id) -> m.Receipt:
        return self._t.run(e.erasure_receipt(request_id))

    def public_key(self) -> m.PublicKey:
        return self._t.run(e.receipt_public_key())


class AccessRequests(Resource):
    def create(self, subject: str) -> m.OperationAccepted:
        return self._t.run(e.file_access_request(subject))

    def export(self, request_id: e.Id) -> m.AccessExport:
        return self._t.run(e.access_export(request_id))


class LegalHolds(Resource):
    def create(self, **hold: Unpack[LegalHoldCreate]) -> m.LegalHold:
        return self._t.run(e.place_hold(hold))

    def get(self, hold_id: e.Id) -> m.LegalHold:
        return self._t.run(e.get_hold(hold_id))

    def list(self, *, active: bool | None = None,
             page_size: int | None = None) -> Iterator[m.LegalHold]:
        return self._t.items(lambda cursor: e.list_holds(active, page_size, cursor))

    def release(self, hold_id: e.Id, *, reason: str | None = None) -> None:
        self._t.run(e.release_hold(hold_id, reason))


class Artifacts(Resource):
    def create(self, kind: str, ref: str, derived_from: list[str]) -> m.Artifact:
        return self._t.run(e.register_artifact(kind, ref, derived_from))

    def get(self, artifact_id: e.Id) -> m.Artifact:
        return self._t.run(e.get_artifact(artifact_id))

    def list(self, *, derived_from: str | None = None, status: str | None = None,
             page_size: int | None = None) -> Iterator[m.Artifact]:
        return self._t.items(lambda cursor: e.list_artifacts(derived_from, status,
                                                             page_size, cursor))

    def erased(self, artifact_id: e.Id) -> m.Artifact:
        return self._t.run(e.artifact_erased(artifact_id))

    def delete(self, artifact_id: e.Id) -> None:
        self._t.run(e.delete_artifact(artifact_id))


class Webhooks(Resource):
    def create(self, url: str, events: list[str]) -> m.WebhookCreated:
        return self._t.run(e.create_webhook(url, events))

    def get(self, webhook_id: e.Id) -> m.Webhook:
        return self._t.run(e.get_webhook(webhook_id))

    def list(self, *, page_size: int | None = None) -> Iterator[m.Webhook]:
        return self._t.items(lambda cursor: e.list_webhooks(page_size, cursor))

    def deliveries(self, webhook_id: e.Id, *,
                   page_size: int | None = None) -> Iterator[m.Delivery]:
        return self._t.items(lambda cursor: e.webhook_deliveries(webhook_id, page_size,
                                                                 cursor))

    def delete(self, webhook_id: e.Id) -> None:
        self._t.run(e.delete_webhook(webhook_id))


class ApiKeys(Resource):
    def create(self, role: str) -> m.ApiKeyCreated:
        return self._t.run(e.create_api_key(role))

    def list(self, *, page_size: int | None = None) -> Iterator[m.ApiKey]:
        return self._t.items(lambda cursor: e.list_api_keys(page_size, cursor))

    def revoke(self, key_id: e.Id) -> None:
        self._t.run(e.revoke_api_key(key_id))


class Staff(Resource):
    def create(self, email: str, role: str, *, password: str | None = None) -> m.StaffCreated:
        return self._t.run(e.add_staff(email, role, password))

    def list(self, *, page_size: int | None = None) -> Iterator[m.StaffMember]:
        return self._t.items(lambda cursor: e.list_staff(page_size, cursor))

    def change_role(self, staff_id: e.Id, role: str) -> m.StaffMember:
        """Make a member an officer or a viewer; their console sessions end. `Conflict`
        (slug `last-officer`) for the tenant's only officer."""
        return self._t.run(e.change_staff_role(staff_id, role))

    def remove(self, staff_id: e.Id) -> None:
        """`Conflict` (slug `last-officer`) for the tenant's only officer."""
        self._t.run(e.remove_staff(staff_id))


class Tenants(Resource):
    """Admin token only."""

    def create(self, name: str) -> m.TenantCreated:
        return self._t.run(e.create_tenant(name))


class Top(Resource):
    """The calls that are not of one resource."""

    def recall(self, subject: str, query: str, *, limit: int | None = None,
               include_suspect: bool | None = None, mode: str | None = None,
               as_of: datetime | str | None = None,
               ) -> m.RecallResponse:
        return self._t.run(e.recall(subject, query, limit, include_suspect, mode,
                                          as_of))

    def forget(self, subject: str, about: str, *, delete: bool | None = None,
               exclude_source: bool | None = None, dry_run: bool | None = None,
               max_targets: int | None = None) -> m.DescribeResult:
        """Forget by description."""
        return self._t.run(e.forget_described(subject, about, delete, exclude_source,
                                              dry_run, max_targets))

    def ingest(self, subject: str, *, source: str | None = None,
               memories: list[IngestMemory] | None = None,
               messages: list[IngestMessage] | None = None,
               idempotency_key: str | None = None) -> m.OperationAccepted:
        return self._t.run(e.ingest(subject, source, memories, messages, idempotency_key))

    def maintenance(self, job: str) -> m.OperationAccepted:
        return self._t.run(e.run_maintenance(job))

    def health(self, *, ready: bool = False) -> dict[str, Any]:
        return self._t.run(e.health("/readyz" if ready else "/healthz"))
