"""Build the conversational retrieval fixture from its hand-written dialogues.

Each `tests/recall/fixtures/dialogues/*.txt` is one conversation: `== <session> | <time>`
opens a session, `Name: text` is a turn (a trailing `{tag}` marks it as evidence), and after
`== questions` each `? <category> | <tag>,<tag> | <question>` asks about the tagged turns.
Questions alternate between the tuning and the reporting half, within each dialogue and
category, so both halves hold every dialogue and kind of question.

    .venv/bin/python -m bench.dialogue_fixture   # rewrites tests/recall/fixtures/dialogues.json
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "recall" / "fixtures"
SOURCES = FIXTURES / "dialogues"
OUTPUT = FIXTURES / "dialogues.json"

_SESSION = re.compile(r"^== (\d+) \| (\S+)$")
_TURN = re.compile(r"^([A-Z][a-z]+): (.*?)(?: \{([a-z0-9_]+)\})?$")
_QUESTION = re.compile(r"^\? (\w+) \| ([a-z0-9_,]+) \| (.+)$")


def parse(path: Path) -> dict[str, Any]:
    """One dialogue's sessions, turns and questions."""
    name = path.stem
    sessions: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    tags: dict[str, str] = {}
    asking = False
    for line in path.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        if line == "== questions":
            asking = True
            continue
        if asking:
            found = _QUESTION.match(line)
            assert found, line
            category, wanted, text = found.groups()
            evidence = [tags[tag] for tag in wanted.split(",")]
            questions.append({"id": f"{name}-q{len(questions) + 1:02d}", "category": category,
                              "question": text, "evidence": evidence})
            continue
        session = _SESSION.match(line)
        if session:
            sessions.append({"id": f"{name}-s{session[1]}", "date": session[2], "turns": []})
            continue
        turn = _TURN.match(line)
        assert turn and sessions, line
        speaker, text, tag = turn.groups()
        turns = sessions[-1]["turns"]
        turn_id = f"{sessions[-1]['id']}-t{len(turns) + 1:02d}"
        turns.append({"id": turn_id, "speaker": speaker, "text": text})
        if tag:
            assert tag not in tags, tag
            tags[tag] = turn_id
    seen: dict[str, int] = {}
    for question in questions:
        count = seen.get(question["category"], 0)
        question["half"] = "tuning" if count % 2 == 0 else "reporting"
        seen[question["category"]] = count + 1
    return {"id": name, "sessions": sessions, "questions": questions}


def main() -> None:
    dialogues = [parse(path) for path in sorted(SOURCES.glob("*.txt"))]
    OUTPUT.write_text(json.dumps({"dialogues": dialogues}, indent=1, ensure_ascii=False) + "\n")
    turns = sum(len(s["turns"]) for d in dialogues for s in d["sessions"])
    questions = sum(len(d["questions"]) for d in dialogues)
    print(f"{len(dialogues)} dialogues, {turns} turns, {questions} questions -> {OUTPUT.name}")


if __name__ == "__main__":
    main()
