"""The lineage page's word diff and graph layout, as pure functions."""

from __future__ import annotations

from app.memories.component import Component, ComponentEdge, ComponentNode
from console.lineage_view import Segment, graph, word_diff


def test_word_diff_marks_words_not_the_spaces_after_them() -> None:
    assert word_diff("Lives in Lisbon and works", "Lives in Porto and works as a nurse") == [
        Segment("same", "Lives in "), Segment("removed", "Lisbon"), Segment("added", "Porto"),
        Segment("same", " and works "), Segment("added", "as a nurse"),
    ]


def test_word_diff_rejoins_into_the_new_text() -> None:
    before, after = "a  b\tc d", "a b  x\nd e"
    kept = "".join(s.text for s in word_diff(before, after) if s.op != "removed")
    assert kept.split() == after.split()
    assert word_diff("same text", "same text") == [Segment("same", "same text")]


def _memory(n: int, depth: int, **extra: object) -> ComponentNode:
    return ComponentNode("memory", f"{n:08d}-0000-0000-0000-000000000000", depth, **extra)


def test_graph_puts_each_hop_in_its_own_column_ancestors_left() -> None:
    me = _memory(0, 0, snippet="Lives in Porto")
    grandparent = ComponentNode("source", "conversation:1", -2)
    parent = _memory(1, -1, snippet="Moved to Porto in March for a new job at the hospital")
    child = _memory(2, 1, forgotten=True)
    grandchild = ComponentNode("artifact", "33333333-0000-0000-0000-000000000000", 2)
    key = lambda n: (n.kind, n.ref)  # noqa: E731
    found = Component(
        nodes=[me, parent, child, grandparent, grandchild],
        edges=[ComponentEdge(key(grandparent), key(parent)), ComponentEdge(key(parent), key(me)),
               ComponentEdge(key(me), key(child)), ComponentEdge(key(child), key(grandchild)),
               ComponentEdge(key(parent), key(child))],
        truncated=False, cap=50)
    drawn = graph(found)
    xs = {n.ref: n.x for n in drawn.nodes}
    assert xs["conversation:1"] < xs[parent.ref] < xs[me.ref] < xs[child.ref] < xs[
        grandchild.ref]
    shown = {n.ref: n for n in drawn.nodes}
    assert shown[child.ref].detail == "forgotten (tombstone)"
    assert shown[child.ref].kind == "forgotten"
    assert shown[parent.ref].detail.endswith("…") and len(shown[parent.ref].detail) <= 27
    assert len(drawn.edges) == 5
    assert all(n.y >= 0 and n.y + drawn.node_h <= drawn.height for n in drawn.nodes)
    assert all(n.x + drawn.node_w <= drawn.width for n in drawn.nodes)
    assert "2 ancestors" in drawn.summary and "2 descendants" in drawn.summary
    assert "2 hops back and 2 forward" in drawn.summary
    assert not drawn.truncated


def test_graph_says_when_the_component_was_cut_at_its_cap() -> None:
    found = Component(nodes=[_memory(0, 0), _memory(1, 1)], edges=[], truncated=True, cap=2)
    drawn = graph(found)
    assert drawn.truncated and "Only the nearest 2" in drawn.summary
