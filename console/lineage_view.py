"""What a lineage page draws: word-level diffs between versions and the provenance graph.

Pure functions over the lineage the memory service returns; no database, no request. The graph
is laid out here and drawn by the template as SVG, so the page needs no script to show it.
"""

from __future__ import annotations

import difflib
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from app.memories.component import Component, ComponentNode
from app.memories.schemas import Lineage, MemoryPublic, VersionPublic

Op = Literal["same", "added", "removed"]
# Words and the whitespace between them, so a diff re-joins into the original spacing.
WORD = re.compile(r"\S+|\s+")


@dataclass(frozen=True)
class Segment:
    op: Op
    text: str


@dataclass(frozen=True)
class VersionStep:
    """One version on the timeline and what changed from the version before it."""

    version: VersionPublic
    diff: list[Segment] | None  # None for the first version
    author: str | None = None  # the audit event's actor; None before content was audited


def word_diff(before: str, after: str) -> list[Segment]:
    """``after`` against ``before`` word by word: runs of kept, added and removed words."""
    old, new = WORD.findall(before), WORD.findall(after)
    segments: list[Segment] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            _append(segments, "same", "".join(new[j1:j2]))
            continue
        if tag in ("delete", "replace"):
            _append(segments, "removed", "".join(old[i1:i2]))
        if tag in ("insert", "replace"):
            _append(segments, "added", "".join(new[j1:j2]))
    return segments


def _append(segments: list[Segment], op: Op, text: str) -> None:
    if op != "same":
        # Spaces around changed words are not part of the change: marks stay on words.
        word = text.strip()
        if not word:
            _append_run(segments, op, text)
            return
        start = text.index(word)
        if start:
            _append_run(segments, "same", text[:start])
        _append_run(segments, op, word)
        if start + len(word) < len(text):
            _append_run(segments, "same", text[start + len(word):])
        return
    _append_run(segments, op, text)


def _append_run(segments: list[Segment], op: Op, text: str) -> None:
    if segments and segments[-1].op == op:
        segments[-1] = Segment(op, segments[-1].text + text)
    else:
        segments.append(Segment(op, text))


def timeline(
    versions: list[VersionPublic], authors: Mapping[uuid.UUID, str] | None = None
) -> list[VersionStep]:
    """Oldest first, each version with its diff from the one before and who wrote it."""
    steps: list[VersionStep] = []
    for index, version in enumerate(versions):
        diff = None if index == 0 else word_diff(versions[index - 1].text, version.text)
        steps.append(VersionStep(version=version, diff=diff,
                                 author=(authors or {}).get(version.id)))
    return steps


# ---------------------------------------------------------------------------------------------
# The provenance graph: one column per hop, ancestors to the left, descendants to the right.
# ---------------------------------------------------------------------------------------------

NODE_W, NODE_H, ROW = 190, 44, 56
GAP = 50  # between columns: room for the arrows
MARGIN = 12
# What fits in a node: a label in the 12px monospace font, a text line in the 11px one.
LABEL_CHARS, SNIPPET_CHARS = 25, 27


@dataclass(frozen=True)
class Node:
    x: int
    y: int
    label: str
    detail: str  # second line: the memory's text, "forgotten (tombstone)", or ""
    kind: str  # memory, source, artifact, forgotten, self
    ref: str

    @property
    def cx(self) -> int:
        return self.x + NODE_W // 2

    @property
    def mid_y(self) -> int:
        return self.y + NODE_H // 2


@dataclass(frozen=True)
class Edge:
    path: str  # SVG path data, a curve from the parent's right edge to the child's left


@dataclass(frozen=True)
class Graph:
    width: int
    height: int
    nodes: list[Node]
    edges: list[Edge]
    summary: str
    truncated: bool
    cap: int
    node_w: int = NODE_W
    node_h: int = NODE_H


def _short(text: str, size: int) -> str:
    return text if len(text) <= size else text[:size - 1].rstrip() + "…"


def _texts(node: ComponentNode) -> tuple[str, str, str]:
    """Label, detail and kind of a node as drawn."""
    if node.depth == 0:
        return f"this memory {node.ref[:8]}…", _short(node.snippet or "", SNIPPET_CHARS), "self"
    if node.kind == "memory":
        if node.forgotten:
            return f"memory {node.ref[:8]}…", "forgotten (tombstone)", "forgotten"
        return f"memory {node.ref[:8]}…", _short(node.snippet or "", SNIPPET_CHARS), "memory"
    if node.kind == "source":
        return _short(f"source: {node.snippet or node.ref}", LABEL_CHARS), "", "source"
    return f"{node.kind} {node.ref[:8]}…", "", node.kind


def graph(found: Component) -> Graph:
    """The component laid out in columns by hop, each column in the order the walk found it."""
    columns: dict[int, list[ComponentNode]] = {}
    for node in found.nodes:
        columns.setdefault(node.depth, []).append(node)
    order = sorted(columns)
    rows = max(len(column) for column in columns.values())
    height = rows * ROW + 2 * MARGIN
    nodes: dict[tuple[str, str], Node] = {}
    for index, depth in enumerate(order):
        column = columns[depth]
        top = (height - len(column) * ROW + (ROW - NODE_H)) // 2
        for row, item in enumerate(column):
            label, detail, kind = _texts(item)
            nodes[(item.kind, item.ref)] = Node(MARGIN + index * (NODE_W + GAP), top + row * ROW,
                                                label, detail, kind, item.ref)
    edges = [Edge(_curve(nodes[edge.parent], nodes[edge.child])) for edge in found.edges]
    ancestors = sum(1 for n in found.nodes if n.depth < 0)
    descendants = sum(1 for n in found.nodes if n.depth > 0)
    summary = (f"Provenance: {ancestors} {'ancestor' if ancestors == 1 else 'ancestors'} "
               f"(what it came from) and {descendants} "
               f"{'descendant' if descendants == 1 else 'descendants'} (what came of it), "
               f"up to {-order[0]} {'hop' if order[0] == -1 else 'hops'} back and "
               f"{order[-1]} forward.")
    if found.truncated:
        summary += f" Only the nearest {found.cap} are shown."
    return Graph(width=len(order) * (NODE_W + GAP) - GAP + 2 * MARGIN, height=height,
                 nodes=list(nodes.values()), edges=edges, summary=summary,
                 truncated=found.truncated, cap=found.cap)


def _curve(parent: Node, child: Node) -> str:
    x1, y1 = parent.x + NODE_W, parent.mid_y
    if child.x > parent.x:
        x2, bend = child.x, (child.x - x1) // 2
        return f"M {x1} {y1} C {x1 + bend} {y1}, {x2 - bend} {child.mid_y}, {x2} {child.mid_y}"
    # Same column (or leftwards, in a cycle): loop out to the right and come back.
    x2 = child.x + NODE_W
    return f"M {x1} {y1} C {x1 + GAP // 2} {y1}, {x2 + GAP // 2} {child.mid_y}, {x2} {child.mid_y}"


def as_of(lineage: Lineage, memory: MemoryPublic, then: datetime) -> Lineage:
    """The lineage as it stood at ``then``: the versions written by then (the one current then
    marked), the state then, and the audit events up to then. ``memory`` is the memory as of
    ``then`` (`queries.get_then`)."""
    versions = [version.model_copy(update={"current": version.id == memory.version.id})
                for version in lineage.versions if version.created_at <= then]
    return lineage.model_copy(update={
        "state": memory.state, "versions": versions, "superseded_by": memory.superseded_by,
        "audit_events": [event for event in lineage.audit_events if event.created_at <= then]})
