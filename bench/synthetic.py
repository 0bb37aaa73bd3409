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


def memory_texts(count: int, *, seed: int = 7) -> Iterator[str]:
    rng = random.Random(seed)
    for index in range(count):
        template = TEMPLATES[index % len(TEMPLATES)]
        yield template.format(
            city=rng.choice(CITIES), job=rng.choice(JOBS), pet=rng.choice(PETS),
            food=rng.choice(FOODS), hobby=rng.choice(HOBBIES), tool=rng.choice(TOOLS),
            relative=rng.choice(RELATIVES), day=rng.choice(DAYS), allergy=rng.choice(ALLERGIES),
            n=rng.randint(2, 12),
        )


QUERIES = [
    "where does this person live?", "what do they do for work?", "do they have pets?",
    "what should I avoid cooking for them?", "what do they like to eat?",
    "what are their hobbies?", "which app do they take notes in?", "when are they free to talk?",
    "are they travelling soon?", "how long should my answers be?", "where is their family?",
    "what do they do at the weekend?",
]
