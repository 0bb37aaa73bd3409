"""A memory's provenance component, as far as a page can show it: its ancestors (what it was
derived from, and what those came from) and its descendants (what was derived from it, and
from those), nearest first, with every edge among them.

The walk goes out one hop at a time in both directions, so a cap keeps the nearest nodes on
each side rather than one long branch; `truncated` says the component goes on beyond what is
returned. Node texts are short snippets of the current version; a forgotten memory is a
tombstone and never has one.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlmodel import Session

from app.memories import store
from app.memories.models import MemoryState

SNIPPET = 60
# Far enough for any real chain of summaries; a component that goes further is marked
# truncated and each memory's own page walks on from there.
MAX_HOPS = 6

Key = tuple[str, str]  # (kind, ref): ("memory", id), ("source", name), ("artifact", id)


@dataclass(frozen=True)
class ComponentNode:
    kind: str
    ref: str
    depth: int  # negative: ancestors, 0: the memory itself, positive: descendants
    # A memory's text (None for a forgotten one); a source's name (its ref is its digest).
    snippet: str | None = None
    forgotten: bool = False


@dataclass(frozen=True)
class ComponentEdge:
    parent: Key
    child: Key


@dataclass(frozen=True)
class Component:
    nodes: list[ComponentNode]
    edges: list[ComponentEdge]
    truncated: bool
    cap: int


def component(
    session: Session, *, tenant_id: uuid.UUID, memory_id: uuid.UUID, max_nodes: int
) -> Component:
    """The memory's ancestors and descendants, transitively, at most ``max_nodes`` nodes in
    all (the memory itself included), nearest hops first."""
    depth: dict[Key, int] = {("memory", str(memory_id)): 0}
    up, down = [memory_id], [memory_id]
    truncated = False
    for hop in range(1, MAX_HOPS + 2):
        found_up = store.edges_into(session, tenant_id=tenant_id, child_ids=up)
        found_down = store.edges_from(session, tenant_id=tenant_id, memory_ids=down)
        if hop > MAX_HOPS:
            truncated = truncated or any(
                (pk, pr) not in depth for _, _, pk, pr in found_up) or any(
                (ck, str(ci)) not in depth for ck, ci, _, _ in found_down)
            break
        up, full_up = _reach(depth, [(pk, pr) for _, _, pk, pr in found_up], -hop, max_nodes)
        down, full_down = _reach(depth, [(ck, str(ci)) for ck, ci, _, _ in found_down], hop,
                                 max_nodes)
        truncated = truncated or full_up or full_down
        if not up and not down:
            break
    return Component(nodes=_nodes(session, tenant_id, depth),
                     edges=_edges(session, tenant_id, depth), truncated=truncated,
                     cap=max_nodes)


def _reach(depth: dict[Key, int], keys: list[Key], at: int, max_nodes: int
           ) -> tuple[list[uuid.UUID], bool]:
    """Adds the new keys at depth ``at``; returns the memories to walk on from, and whether
    the cap left some out."""
    frontier: list[uuid.UUID] = []
    left_out = False
    for key in keys:
        if key in depth:
            continue  # seen nearer (or a cycle): the first depth stands
        if len(depth) >= max_nodes:
            left_out = True
            continue
        depth[key] = at
        if key[0] == "memory":
            frontier.append(uuid.UUID(key[1]))
    return frontier, left_out


def _nodes(session: Session, tenant_id: uuid.UUID, depth: dict[Key, int]
           ) -> list[ComponentNode]:
    ids = [uuid.UUID(ref) for kind, ref in depth if kind == "memory"]
    views = {str(view.id): view for view in store.views(session, tenant_id=tenant_id, ids=ids)}
    # A source's ref is its digest; its name, for showing, is a citing memory's sealed copy.
    names = store.source_names(session, tenant_id=tenant_id,
                               digests=[ref for kind, ref in depth if kind == "source"])
    nodes: list[ComponentNode] = []
    for (kind, ref), at in depth.items():
        view = views.get(ref) if kind == "memory" else None
        if kind == "source":
            nodes.append(ComponentNode(kind, ref, at, snippet=names.get(ref)))
        elif kind != "memory":
            nodes.append(ComponentNode(kind, ref, at))
        elif view is None or view.state is MemoryState.forgotten:
            nodes.append(ComponentNode(kind, ref, at, forgotten=True))
        else:
            nodes.append(ComponentNode(kind, ref, at, snippet=_snippet(view.text)))
    return nodes


def _edges(session: Session, tenant_id: uuid.UUID, depth: dict[Key, int]
           ) -> list[ComponentEdge]:
    # Every edge between two shown nodes, not only the ones the walk came along: a summary
    # derived from the memory and from its parent shows both arrows.
    children = [uuid.UUID(ref) for kind, ref in depth if kind != "source"]
    edges: list[ComponentEdge] = []
    for child_kind, child_id, parent_kind, parent_ref in store.edges_into(
            session, tenant_id=tenant_id, child_ids=children):
        parent, child = (parent_kind, parent_ref), (child_kind, str(child_id))
        if parent in depth and child in depth:
            edges.append(ComponentEdge(parent, child))
    return edges


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET else flat[:SNIPPET - 1].rstrip() + "…"
