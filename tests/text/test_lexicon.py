"""The one "same word" rule, on the light stemmer's stems and on PostgreSQL's lexemes.

The supersession rule compares `stem` outputs ("allergy", "allergic"); forget by description
compares PostgreSQL's english lexemes ("allergi", "allerg"). Both ask `same_word`.
"""

from __future__ import annotations

import pytest

from app.text.lexicon import same_word, stem


@pytest.mark.parametrize(("a", "b"), [
    ("allergy", "allergic"),  # stem() keeps both whole: a final y reads as i
    ("allergi", "allerg"),  # PostgreSQL's lexemes of the same two words
    ("study", "studi"),  # stem("study") and stem("studied")
    ("nurs", "nurse"),  # stem("nursing") lost the silent e
    ("smok", "smoke"),
    ("employ", "employer"),
    ("marri", "marriage"),
    ("sneaker", "sneakers"),
])
def test_forms_of_one_word_are_the_same_word(a: str, b: str) -> None:
    assert same_word(a, b) and same_word(b, a)


@pytest.mark.parametrize(("a", "b"), [
    ("carpet", "carpenter"),  # five letters in common, then apart
    ("vegetable", "vegetarian"),
    ("555-1234", "555-1299"),  # phone numbers are compared as written
    ("elect", "electrician"),  # PostgreSQL's "election" against a much longer word
    ("veget", "vegetarian"),  # PostgreSQL's "vegetable"
    ("happy", "happen"),  # a final y only stands for an i
    ("collect", "college"),
    ("cook", "cookie"),  # four letters begin too many words
])
def test_words_that_only_start_alike_are_not(a: str, b: str) -> None:
    assert not same_word(a, b) and not same_word(b, a)


def test_the_light_stemmer_and_the_rule_join_inflections_and_derivations() -> None:
    assert same_word(stem("allergic"), stem("allergy"))
    assert same_word(stem("smoking"), stem("smoke"))
    assert stem("lives") == stem("living") == "live"
