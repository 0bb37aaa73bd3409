"""The statement parser's cache stays small: a stream of distinct texts (every write brings
one) fills it to its bound and no further, and each entry holds a text and its word sets."""

from __future__ import annotations

from app.text.statements import parse


def test_parsed_statements_kept_are_at_most_256_however_many_texts_are_read() -> None:
    for n in range(1_000):
        parse(f"Enjoys tea and chess (note {n:x}).")
    assert parse.cache_info().currsize <= 256


def test_a_text_read_again_soon_is_served_from_the_cache() -> None:
    text = "My sister lives in Madrid (note cached)."
    first = parse(text)
    assert parse(text) is first
