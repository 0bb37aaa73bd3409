"""The blank-text rule reads the same to this server and to a JSON Schema reader."""

from __future__ import annotations

import re

import pytest
from pydantic import TypeAdapter, ValidationError

from app.core.schemas import NonBlank

NON_BLANK = TypeAdapter(NonBlank)
# Whitespace to one regex engine and not to another: U+0085 (Unicode's, the server's) and
# U+FEFF (ECMAScript's, a client's or a property test's).
DISPUTED = ["\x85", "\ufeff", " \x85\ufeff\t"]


@pytest.mark.parametrize("text", ["", " ", "\u00a0", "\u3000", "a\x00", *DISPUTED])
def test_blank_texts_are_refused(text: str) -> None:
    with pytest.raises(ValidationError):
        NON_BLANK.validate_python(text)


@pytest.mark.parametrize("text", ["a", " Lives in Lisbon ", "\x85a", "é"])
def test_texts_with_a_visible_character_pass(text: str) -> None:
    assert NON_BLANK.validate_python(text) == text


@pytest.mark.parametrize("text", DISPUTED)
def test_what_the_schema_says_refuses_the_disputed_whitespace_in_python_too(text: str) -> None:
    pattern = NON_BLANK.json_schema()["pattern"]
    assert re.search(pattern, text) is None
