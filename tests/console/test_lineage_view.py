"""The lineage page's word diff and graph layout, as pure functions."""

from __future__ import annotations

from datetime import UTC, datetime

from app.memories.schemas import EdgePublic
from console.lineage_view import MAX_PER_SIDE, Segment, graph, word_diff

NOW = datetime(2026, 1, 1, tzinfo=UTC)


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


def test_graph_puts_parents_left_children_right_and_folds_the_rest() -> None:
    parents = [EdgePublic(kind="source", ref="conversation:1", created_at=NOW)]
    children = [EdgePublic(kind="memory", ref=f"{n:08d}-0000-0000-0000-000000000000",
                           created_at=NOW) for n in range(MAX_PER_SIDE + 3)]
    drawn = graph("11111111-2222-3333-4444-555555555555", parents, children)
    left = [n for n in drawn.nodes if n.x == 16]
    right = [n for n in drawn.nodes if n.x == 584]
    assert [n.label for n in left] == ["source: conversation:1"]
    assert len(right) == MAX_PER_SIDE + 1 and right[-1].label == "+3 more"
    assert len(drawn.edges) == 1 + MAX_PER_SIDE + 1
    assert all(n.y >= 0 and n.y + 40 <= drawn.height for n in drawn.nodes)
    assert "11 children" in drawn.summary
