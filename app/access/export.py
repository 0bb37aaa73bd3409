"""The export document: everything Lethe holds about one subject, nothing of anyone else's.

Memories in every state: those that hold content with every version's text, flags and
provenance; forgotten ones as tombstones (ID and dates: their content is gone). Provenance
edges to memories of other subjects are counted, not named. Then the subject's retraction
records, the exclusions of the sources its memories cite, and the audit trail of its memories.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from datetime import datetime

from sqlmodel import Session

from app.access.schemas import (
    AccessExportDocument,
    ExportCounts,
    ExportEdge,
    ExportMemory,
    ExportProvenance,
    ExportRetraction,
    ExportTombstone,
    ExportVersion,
)
from app.audit import service as audit
from app.forgetting import retractions
from app.keys import digests
from app.memories import queries, sealing
from app.memories.models import Memory, MemoryState, ProvenanceEdge
from app.sources import service as sources


def build(
    session: Session, *, tenant_id: uuid.UUID, subject: str, request_id: uuid.UUID,
    now: datetime,
) -> AccessExportDocument:
    shown_subject, subject = subject, digests.subject_digest(tenant_id, subject)
    memories = queries.of_subject(session, tenant_id=tenant_id, subject=subject)
    opener = sealing.Opener()
    names = {memory.source: queries.source_of(memory, opener)
             for memory in memories if memory.source}
    ids = {memory.id for memory in memories}
    versions: dict[uuid.UUID, list[queries.OpenedVersion]] = defaultdict(list)
    for version in queries.versions_of_subject(session, tenant_id=tenant_id, subject=subject):
        versions[version.memory_id].append(version)
    edges = queries.edges_of_subject(session, tenant_id=tenant_id, subject=subject)
    provenance = _provenance(edges, ids, names)
    live = [memory for memory in memories if memory.state != MemoryState.forgotten]
    shown = [_memory(memory, versions[memory.id], provenance[memory.id], names)
             for memory in live]
    tombstones = [ExportTombstone(id=memory.id, created_at=memory.created_at,
                                  forgotten_at=memory.state_changed_at)
                  for memory in memories if memory.state == MemoryState.forgotten]
    records = [ExportRetraction(id=row.id, about=retractions.about_of(row),
                                memory_ids=row.memory_ids, memory_count=row.memory_count,
                                created_at=row.created_at)
               for row in retractions.of_subject(session, tenant_id=tenant_id,
                                                 subject=subject)]
    cited = {memory.source for memory in memories if memory.source} | {
        edge.parent_ref for edge in edges if edge.parent_kind == "source" and edge.child_id in ids}
    exclusions = sources.naming(session, tenant_id=tenant_id, digests=cited)
    trail = audit.about_targets(session, tenant_id=tenant_id, target_kind="memory",
                                target_ids=[str(memory.id) for memory in memories])
    return AccessExportDocument(
        request_id=request_id, tenant_id=tenant_id, subject=shown_subject, generated_at=now,
        counts=ExportCounts(
            memories=len(shown), forgotten=len(tombstones),
            versions=sum(len(memory.versions) for memory in shown), retractions=len(records),
            source_exclusions=len(exclusions), audit_events=len(trail)),
        memories=shown, forgotten=tombstones, retractions=records,
        source_exclusions=exclusions, audit_events=trail,
    )


def _memory(
    memory: Memory, versions: list[queries.OpenedVersion], provenance: ExportProvenance,
    names: dict[str, str | None],
) -> ExportMemory:
    return ExportMemory(
        id=memory.id, state=MemoryState(memory.state), volatility=memory.volatility,
        key=memory.key, source=names.get(memory.source or "", memory.source),
        depends_on=memory.depends_on,
        metadata=queries.metadata_of(memory), flags=memory.flags, revision=memory.revision,
        superseded_by=memory.superseded_by, current_version_id=memory.current_version_id,
        created_at=memory.created_at, updated_at=memory.updated_at,
        last_validated_at=memory.last_validated_at, state_changed_at=memory.state_changed_at,
        versions=[ExportVersion(id=v.id, seq=v.seq, text=v.text, created_at=v.created_at,
                                current=v.id == memory.current_version_id) for v in versions],
        provenance=provenance,
    )


def _provenance(
    edges: list[ProvenanceEdge], subject_ids: set[uuid.UUID], names: dict[str, str | None]
) -> dict[uuid.UUID, ExportProvenance]:
    """Each of the subject's memories' edges; an edge to another subject's memory counted;
    a source by its string (``names``: digest → string, from the memories' sealed copies)."""
    found: dict[uuid.UUID, ExportProvenance] = defaultdict(
        lambda: ExportProvenance(parents=[], children=[], parents_elsewhere=0,
                                 children_elsewhere=0))
    for edge in edges:
        parent = _uuid(edge.parent_ref) if edge.parent_kind == "memory" else None
        if edge.child_id in subject_ids:
            mine = found[edge.child_id]
            if edge.parent_kind == "source" or parent in subject_ids:
                ref = (names.get(edge.parent_ref) or edge.parent_ref
                       if edge.parent_kind == "source" else edge.parent_ref)
                mine.parents.append(ExportEdge(kind=edge.parent_kind, ref=ref,
                                               created_at=edge.created_at))
            else:
                mine.parents_elsewhere += 1
        if parent is not None and parent in subject_ids:
            theirs = found[parent]
            if edge.child_id in subject_ids:
                theirs.children.append(ExportEdge(kind="memory", ref=str(edge.child_id),
                                                  created_at=edge.created_at))
            else:
                theirs.children_elsewhere += 1
    return found


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None
