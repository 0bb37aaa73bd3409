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
from typing import Literal

from app.memories.schemas import EdgePublic, VersionPublic

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
# The provenance graph: parents in the left column, the memory in the middle, children right.
# ---------------------------------------------------------------------------------------------

NODE_W, NODE_H, ROW = 200, 40, 52
COLUMNS = (16, 300, 584)
WIDTH = COLUMNS[2] + NODE_W + 16
# Beyond this many on a side the rest is one "+N more" node; the lists below the graph name
# every edge.
MAX_PER_SIDE = 8


@dataclass(frozen=True)
class Node:
    x: int
    y: int
    label: str
    kind: str  # memory, source, artifact, more, self

    @property
    def cx(self) -> int:
        return self.x + NODE_W // 2

    @property
    def mid_y(self) -> int:
        return self.y + NODE_H // 2


@dataclass(frozen=True)
class Edge:
    x1: int
    y1: int
    x2: int
    y2: int


@dataclass(frozen=True)
class Graph:
    width: int
    height: int
    nodes: list[Node]
    edges: list[Edge]
    summary: str


def _label(edge: EdgePublic) -> str:
    ref = edge.ref if edge.kind != "memory" else edge.ref[:8] + "…"
    text = f"{edge.kind}: {ref}"
    return text if len(text) <= 26 else text[:25] + "…"


def _column(edges: list[EdgePublic], x: int, height: int) -> list[Node]:
    shown = edges[:MAX_PER_SIDE]
    nodes = [Node(x, 0, _label(edge), edge.kind) for edge in shown]
    if len(edges) > MAX_PER_SIDE:
        nodes.append(Node(x, 0, f"+{len(edges) - MAX_PER_SIDE} more", "more"))
    top = (height - len(nodes) * ROW + (ROW - NODE_H)) // 2
    return [Node(n.x, top + i * ROW, n.label, n.kind) for i, n in enumerate(nodes)]


def graph(memory_id: str, parents: list[EdgePublic], children: list[EdgePublic]) -> Graph:
    rows = max(1, min(len(parents), MAX_PER_SIDE + 1), min(len(children), MAX_PER_SIDE + 1))
    height = rows * ROW + 24
    centre = Node(COLUMNS[1], (height - NODE_H) // 2, f"this memory {memory_id[:8]}…", "self")
    left = _column(parents, COLUMNS[0], height)
    right = _column(children, COLUMNS[2], height)
    edges = [Edge(n.x + NODE_W, n.mid_y, centre.x, centre.mid_y) for n in left]
    edges += [Edge(centre.x + NODE_W, centre.mid_y, n.x, n.mid_y) for n in right]
    summary = (f"Provenance: derived from {len(parents)} "
               f"{'parent' if len(parents) == 1 else 'parents'}; "
               f"{len(children)} {'child' if len(children) == 1 else 'children'} "
               "derived from it.")
    return Graph(width=WIDTH, height=height, nodes=[*left, centre, *right], edges=edges,
                 summary=summary)
