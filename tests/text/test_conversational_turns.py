"""The supersession rule on conversational turns: what a chat message states or only asks.

Real-looking messages (the dialogue benchmark's kind, bench/beam_bench.py): greetings, thanks,
praise and questions state no fact, so they contradict nothing and nothing contradicts them;
a long request is never compared as a whole, only through a value it says has changed beside
the same attribute words. Real MiniLM similarities, default thresholds.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from app.text import claims
from app.text.supersession import DEFAULT, Relation, classify


@pytest.fixture(scope="module")
def embed() -> object:
    from app.embeddings.local import LocalMiniLMEmbedder

    model = LocalMiniLMEmbedder(batch_size=32)
    return lambda texts: model.embed(list(texts))


def relation(embed: object, old: str, new: str) -> Relation:
    old_vector, new_vector = embed([old, new])  # type: ignore[operator]
    return classify(new, new_vector, old, old_vector, DEFAULT).relation


# (old, new): none is a contradiction; the earlier rule called the first and the third ones.
NOT_CONTRADICTIONS: Sequence[tuple[str, str]] = [
    # Encouragement, then thanks and a plan: the first example.
    ("Taking time for yourself is so important. You're doing an awesome job looking after "
     "yourself and your family!",
     "Thanks, Mel! I'm now taking time for myself and my family."),
    # A statement, then an exclamation and a question about it: the second example.
    ("Painting's great for expressing myself. I love creating art!",
     "Wow, Mel! Any new paintings coming up now?"),
    # Two requests to an assistant about one project, the later with a change word.
    ("I'm trying to implement the basic homepage route with Flask, and I've managed to return "
     "static HTML, but I'm not sure how to optimize it for better response times, can you "
     "help me with that?",
     "I'm now trying to switch the homepage route in my Flask app to a new template with "
     "Jinja2, but I'm not sure how to pass the data to it, can you help me with an example?"),
    # Different numbers of different things in two long messages.
    ("I'm trying to plan my study schedule for the probability course, I have 3 chapters "
     "left and about 10 practice problems per chapter, how should I split them over the week?",
     "I've now moved on to conditional probability and I've solved 12 problems on Bayes' "
     "theorem so far, but I keep mixing up the formulas, can you give me a trick to remember?"),
]


@pytest.mark.parametrize(("old", "new"), NOT_CONTRADICTIONS)
def test_turns_that_state_nothing_contradict_nothing(embed: object, old: str, new: str) -> None:
    assert relation(embed, old, new) is not Relation.contradiction


# (old, new): a value said to have changed, beside the same attribute words.
UPDATES: Sequence[tuple[str, str]] = [
    ("I set a $700 budget ceiling for the new phone, prioritizing camera and battery life, "
     "will that be enough for a good smartphone",
     "I've now set a $750 budget ceiling for the new phone since I want a better camera, "
     "which models should I compare?"),
    ("I'm kinda worried that I only secured 3 interviews for executive producer roles "
     "between April 25 and May 1, is that a good sign for my resume?",
     "Good news, I've now secured 5 interviews for executive producer roles, how can I "
     "prepare for the next round?"),
    ("I'm planning a trip to Quebec City and I've booked a hotel room for $250 CAD per night "
     "starting July 30, can you help me make the most of my stay?",
     "I just found out the hotel rate was adjusted to $270 CAD per night due to seasonal "
     "demand, how can I make this trip more affordable?"),
]


@pytest.mark.parametrize(("old", "new"), UPDATES)
def test_a_value_said_to_have_changed_contradicts_the_old_one(
    embed: object, old: str, new: str,
) -> None:
    assert relation(embed, old, new) is Relation.contradiction


def test_a_value_of_another_attribute_or_person_is_no_update(embed: object) -> None:
    old = ("I set a $700 budget ceiling for the new phone, prioritizing camera and battery "
           "life, will that be enough?")
    assert relation(embed, old, "My sister raised her budget ceiling for the new phone to "
                    "$900, should I do the same?") is not Relation.contradiction
    assert relation(embed, old, "The phone I liked has now dropped to $650 at the store "
                    "near my office, is it a good deal?") is not Relation.contradiction


@pytest.mark.parametrize(("sentence", "states"), [
    ("Thanks, Mel!", False),
    ("Wow, any more paintings coming up?", False),
    ("You're doing an awesome job looking after your family!", False),
    ("Can you help me implement user sessions", False),
    ("I'm not sure if that's enough for a good smartphone", False),
    ("Hey, I moved to Berlin last week.", True),
    ("I love creating art!", True),
    ("My birthday is on May 12.", True),
])
def test_what_a_sentence_states(sentence: str, states: bool) -> None:
    assert claims.states(sentence) is states


def test_a_short_statement_is_compared_whole_and_a_long_message_is_not() -> None:
    assert not claims.read("I moved to Berlin last week.").long
    assert claims.read("I'm trying to optimize the dashboard API response time, which has "
                       "recently improved to 250ms after adding some caching tweaks, but I "
                       "want to make sure I'm using the latest versions of my dependencies, "
                       "can you help me?").long
