"""Synthetic but plausible memories for benchmarks: varied templates, reproducible by seed."""

from __future__ import annotations

import random
from collections.abc import Iterator

CITIES = ["Lisbon", "Berlin", "Oslo", "Madrid", "Toronto", "Nairobi", "Osaka", "Lima", "Austin",
          "Krakow", "Dublin", "Seoul", "Accra", "Porto", "Lyon", "Quito", "Perth", "Tallinn"]
JOBS = ["nurse", "data engineer", "teacher", "architect", "pilot", "accountant", "chef",
        "product designer", "lawyer", "electrician", "researcher", "journalist", "dentist"]
PETS = ["a beagle", "two cats", "a parrot", "a rescue greyhound", "a tortoise", "goldfish"]
FOODS = ["sushi", "spicy curry", "pasta", "tacos", "dumplings", "falafel", "ramen", "paella"]
HOBBIES = ["bouldering", "chess", "trail running", "pottery", "birdwatching", "salsa dancing",
           "woodworking", "sailing", "baking sourdough", "cycling", "photography"]
TOOLS = ["Vim", "VS Code", "Excel", "Figma", "Notion", "Jira", "Linear", "Obsidian", "Emacs"]
RELATIVES = ["sister", "brother", "mother", "father", "cousin", "grandmother", "best friend"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ALLERGIES = ["peanuts", "shellfish", "gluten", "lactose", "penicillin", "pollen", "cats"]
TEMPLATES = [
    "Lives in {city} and has been there for {n} years.",
    "Works as a {job} at a company with about {n}0 people.",
    "Has {pet} at home and walks or feeds them every morning.",
    "Favourite food is {food}, especially on {day} evenings.",
    "Spends weekends {hobby}; started about {n} years ago.",
    "Prefers to write everything in {tool} and dislikes switching tools.",
    "Their {relative} lives in {city} and they visit every {n} months.",
    "Is allergic to {allergy}; keep it out of any meal suggestions.",
    "Has a standing call every {day} at {n}:30 with the team.",
    "Is planning a trip to {city} in {n} weeks for a conference.",
    "Wants replies to be short and to the point, no more than {n} sentences.",
    "Is learning {hobby} and practises {n} times a week.",
    "Uses {tool} for project notes and shares them on {day}s.",
    "Cannot take calls before {n} am because of the school run.",
]


# The same fact said differently, slot for slot with TEMPLATES: near-duplicates that
# consolidation should find and that share few exact words with their original.
PARAPHRASES = [
    "Has been living in {city} for {n} years now.",
    "Is a {job} at a firm of roughly {n}0 employees.",
    "Looks after {pet} at home, every morning without fail.",
    "Loves eating {food}, above all on {day} evenings.",
    "Took up {hobby} around {n} years ago and does it at weekends.",
    "Writes everything in {tool} and hates changing tools.",
    "Visits their {relative} in {city} every {n} months.",
    "Has an allergy to {allergy}, so never suggest meals containing it.",
    "Meets the team on a recurring call each {day} at {n}:30.",
    "Will travel to {city} in {n} weeks to attend a conference.",
    "Likes short, direct answers of at most {n} sentences.",
    "Practises {hobby} {n} times a week while learning it.",
    "Keeps project notes in {tool} and shares them every {day}.",
    "Is unavailable for calls until {n} am due to the school run.",
]


def _slots(rng: random.Random) -> dict[str, object]:
    # Drawn in this order so `memory_texts` stays what it was for a given seed.
    return {
        "city": rng.choice(CITIES), "job": rng.choice(JOBS), "pet": rng.choice(PETS),
        "food": rng.choice(FOODS), "hobby": rng.choice(HOBBIES), "tool": rng.choice(TOOLS),
        "relative": rng.choice(RELATIVES), "day": rng.choice(DAYS),
        "allergy": rng.choice(ALLERGIES), "n": rng.randint(2, 12),
    }


def memory_texts(count: int, *, seed: int = 7, distinct: bool = False) -> Iterator[str]:
    """One fact per text; with ``distinct``, three (three different templates), so that
    100,000 texts are nearly all different: with one fact each, every text repeats ≈ 50 times
    over 100,000, which no real store does and which an HNSW graph handles badly."""
    rng = random.Random(seed)
    for index in range(count):
        offsets = (0, 5, 9) if distinct else (0,)
        yield " ".join(TEMPLATES[(index + offset) % len(TEMPLATES)].format(**_slots(rng))
                       for offset in offsets)


def subject_memories(
    subjects: int, per_subject: int, *, duplicate_share: float = 0.1, seed: int = 13
) -> Iterator[tuple[int, str, str]]:
    """(subject index, text, the fact it states): a paraphrase states its original's fact.

    Besides the paraphrases, a subject holds several facts from one template with other
    values ("Lives in Oslo…", "Lives in Lima…"): similar, but not duplicates; and, by chance,
    exact repeats (a template with one small slot drawn twice).
    """
    rng = random.Random(seed)
    paraphrased = round(per_subject * duplicate_share)
    for subject in range(subjects):
        originals = []
        for index in range(per_subject - paraphrased):
            template, slots = (subject + index) % len(TEMPLATES), _slots(rng)
            originals.append((template, slots))
            fact = TEMPLATES[template].format(**slots)
            yield subject, fact, fact
        for template, slots in rng.sample(originals, paraphrased):
            stated = TEMPLATES[template].format(**slots)
            yield subject, PARAPHRASES[template].format(**slots), stated


QUERIES = [
    "where does this person live?", "what do they do for work?", "do they have pets?",
    "what should I avoid cooking for them?", "what do they like to eat?",
    "what are their hobbies?", "which app do they take notes in?", "when are they free to talk?",
    "are they travelling soon?", "how long should my answers be?", "where is their family?",
    "what do they do at the weekend?",
]
