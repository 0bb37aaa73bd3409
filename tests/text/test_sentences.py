"""The one sentence splitter (forget by description, request detection): exact substrings,
faithful rejoining."""

from __future__ import annotations

import pytest

from app.text.sentences import join_kept, spans, split


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I live in Leeds. I collect sneakers. I work as a nurse.",
         ["I live in Leeds.", "I collect sneakers.", "I work as a nurse."]),
        ("I see Dr. Patel on Mondays. She is kind.",
         ["I see Dr. Patel on Mondays.", "She is kind."]),
        ("I like hot drinks, e.g. tea and cocoa. Not coffee!",
         ["I like hot drinks, e.g. tea and cocoa.", "Not coffee!"]),
        ("My shoe size is 9.5 in the UK. Really?", ["My shoe size is 9.5 in the UK.", "Really?"]),
        ("First line\nSecond line.\n\nThird.", ["First line", "Second line.", "Third."]),
        ("I said \"stop.\" Then I left.", ["I said \"stop.\"", "Then I left."]),
        ("No punctuation at all", ["No punctuation at all"]),
        ("  padded.  ", ["padded."]),
    ],
)
def test_split_finds_sentences_as_exact_substrings(text: str, expected: list[str]) -> None:
    pieces = split(text)
    assert [piece.text for piece in pieces] == expected
    assert all(text[piece.start:piece.end] == piece.text for piece in pieces)


@pytest.mark.parametrize(
    ("keep", "expected"),
    [
        ([True, False, True], "I live in Leeds. I work as a nurse."),
        ([False, True, True], "I collect sneakers.\n\nI work as a nurse."),
        ([True, True, False], "I live in Leeds. I collect sneakers."),
        ([True, True, True], "I live in Leeds. I collect sneakers.\n\nI work as a nurse."),
        ([False, False, False], ""),
    ],
)
def test_join_kept_closes_each_gap_with_an_original_separator(
    keep: list[bool], expected: str
) -> None:
    text = "I live in Leeds. I collect sneakers.\n\nI work as a nurse."
    assert join_kept(text, split(text), keep) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I moved to the U.S. last year. It is big.",
         ["I moved to the U.S. last year.", "It is big."]),
        ("Lunch at 1 p.m. Then a walk.", ["Lunch at 1 p.m.", "Then a walk."]),
        ("I live in flat no. 5. I said no. then I left.",
         ["I live in flat no. 5.", "I said no.", "then I left."]),
        ("Fruit, e.g.    apples. Done.", ["Fruit, e.g.    apples.", "Done."]),
    ],
)
def test_abbreviations_end_a_sentence_only_before_a_capital(
    text: str, expected: list[str]
) -> None:
    assert [piece.text for piece in split(text)] == expected


def test_soft_wraps_join_a_sentence_broken_mid_line_only_when_asked() -> None:
    text = "please forget my\naddress, and\r\nmy phone\nNew line. Next\nthing"
    assert [piece.text for piece in split(text, soft_wraps=True)] == [
        "please forget my\naddress, and\r\nmy phone", "New line.", "Next\nthing"]
    assert [piece.text for piece in split(text)] == [
        "please forget my", "address, and", "my phone", "New line.", "Next", "thing"]
    assert [(s.start, s.end) for s in split(text, soft_wraps=True)] == list(
        spans(text, soft_wraps=True))

