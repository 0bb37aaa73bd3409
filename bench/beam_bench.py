"""Truth on real dialogue: recall and write-time contradictions over BEAM's user messages.

    .venv/bin/python bench/beam_bench.py [--beam DIR] [--chats N] [--only 100K|500K]
                                         [--tune] [--save-lists FILE]

BEAM ("Beyond a Million Tokens", public) reduced to its user messages and the questions that
cite them: a folder of `<size>/<n>.json` chats (27 in the developers' split, 10,317 messages;
its README describes the format). `--beam` names the folder; without it `LETHE_BEAM_DIR`,
then `../shared/data/beam` beside the repository, are tried.

Each chat is one subject: its user messages are stored in order with `POST /v1/memories` on a
live `lethe api`, one memory each (`observed_at` from the chat's time anchors, a minute per
message; a text over the API's 8,000 characters is cut there). Every write's
`effects.suspected` is kept, so a contradiction flag is known with the write that raised it.
Then each question is asked with `POST /v1/recall` (limit 10) in `vector`, `keyword` and
`hybrid` mode. Printed:

- evidence hit@10 per question category and mode (a cited message among the first ten), for
  the tuning half (even-numbered chats in file order), the reporting half and all;
- the false-contradiction rate: memories flagged `contradicted` that are in no contradiction
  or knowledge-update pair, over all memories;
- contradiction recall: of the contradiction pairs (earlier and later statement, by message
  order), the earlier flagged `contradicted` (or superseded) by the write of the later one,
  and by any write at or after it;
- knowledge updates: the same for the original fact and its update, how often the update
  ranks above the original in hybrid recall of the question (limit 50; the update found,
  the original lower or absent), and how often the original is among the first ten results
  unflagged.

`--tune` reads recall's two candidate lists for every question (as `dialogue_bench.py
--tune` does) and prints the fusions tried, per half.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from bench.common import create_tenant, live_api, use_data_dir

ROOT = Path(__file__).resolve().parents[1]
MODES = ("vector", "keyword", "hybrid")
HALVES = ("tuning", "reporting")
TEXT_MAX = 8000
MESSAGE_GAP = timedelta(minutes=1)
START = datetime(2024, 1, 1, tzinfo=UTC)
PAIRED = ("knowledge_update", "contradiction_resolution")
# The sources naming the earlier and the later statement of a pair.
PAIR_SOURCES = {"knowledge_update": ("original_info", "updated_info"),
                "contradiction_resolution": ("first_statement", "second_statement")}


@dataclass(frozen=True)
class Message:
    id: int
    text: str
    observed_at: datetime


@dataclass(frozen=True)
class Question:
    chat: str
    category: str
    text: str
    evidence: frozenset[int]
    # Paired categories: (earlier, later) message IDs.
    pair: tuple[int, int] | None


@dataclass
class Chat:
    name: str
    half: str
    messages: list[Message]
    questions: list[Question]
    memory_of: dict[int, str] = field(default_factory=dict)  # message ID → memory ID
    # message ID → the message IDs whose write flagged it
    flagged_by: dict[int, set[int]] = field(default_factory=dict)


def beam_dir(given: Path | None) -> Path:
    for candidate in (given, os.environ.get("LETHE_BEAM_DIR"), ROOT.parent / "shared" / "data"
                      / "beam"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    raise SystemExit("BEAM not found: pass --beam DIR or set LETHE_BEAM_DIR")


def anchor(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.strptime(value, "%B-%d-%Y").replace(tzinfo=UTC)
    except ValueError:
        return None


def pair_of(category: str, sources: dict[str, list[int]]) -> tuple[int, int] | None:
    """The earlier and the later statement of a paired question (by message order), or None
    when BEAM cites one message for both."""
    first, second = PAIR_SOURCES[category]
    ids = sorted({*sources.get(first, []), *sources.get(second, [])})
    if len(ids) < 2:
        return None
    if category == "knowledge_update" and sources.get(first) and sources.get(second):
        return min(sources[first]), max(sources[second])
    return ids[0], ids[-1]


def load(folder: Path, *, chats: int | None, only: str | None) -> list[Chat]:
    files = sorted(folder.glob("*/*.json"),
                   key=lambda p: (p.parent.name, int(p.stem) if p.stem.isdigit() else 0))
    if only:
        files = [f for f in files if f.parent.name == only]
    loaded: list[Chat] = []
    for index, path in enumerate(files[:chats] if chats else files):
        data = json.loads(path.read_text())
        when = START
        messages = []
        for message in data["messages"]:
            when = max(anchor(message.get("time_anchor")) or when, when)
            messages.append(Message(message["id"], message["content"][:TEXT_MAX], when))
            when += MESSAGE_GAP
        stored = {m.id for m in messages}
        questions = []
        for q in data["questions"]:
            evidence = frozenset(i for ids in q["sources"].values() for i in ids if i in stored)
            if not evidence:
                continue
            pair = pair_of(q["category"], q["sources"]) if q["category"] in PAIRED else None
            questions.append(Question(data["chat"], q["category"], q["question"], evidence,
                                      pair))
        loaded.append(Chat(data["chat"], HALVES[index % 2], messages, questions))
    return loaded


def subject(chat: Chat) -> str:
    return f"beam:{chat.name}"


def store(client: httpx.Client, chat: Chat) -> None:
    """The chat's messages in order, one memory each; who flagged whom is kept."""
    message_of: dict[str, int] = {}
    for message in chat.messages:
        response = client.post("/v1/memories", json={
            "subject": subject(chat), "text": message.text, "source": f"beam:{chat.name}",
            "observed_at": message.observed_at.isoformat()})
        assert response.status_code in (200, 201), response.text
        body = response.json()
        if body.get("id") is None:  # read as a request to forget: nothing stored
            continue
        chat.memory_of[message.id] = body["id"]
        message_of[body["id"]] = message.id
        for suspected in body["effects"]["suspected"]:
            chat.flagged_by.setdefault(message_of[suspected], set()).add(message.id)


def states(client: httpx.Client, chat: Chat) -> dict[str, dict[str, Any]]:
    """Every memory of the chat's subject as listed now, by memory ID."""
    found: dict[str, dict[str, Any]] = {}
    cursor = None
    while True:
        params: dict[str, Any] = {"subject": subject(chat), "limit": 200}
        if cursor:
            params["cursor"] = cursor
        response = client.get("/v1/memories", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        found.update({m["id"]: m for m in page["data"]})
        cursor = page["next_cursor"]
        if not cursor:
            return found


def recall(client: httpx.Client, chat: Chat, question: Question, mode: str,
           limit: int = 10) -> list[int]:
    response = client.post("/v1/recall", json={"subject": subject(chat), "query": question.text,
                                               "limit": limit, "mode": mode})
    assert response.status_code == 200, response.text
    message_of = {memory: message for message, memory in chat.memory_of.items()}
    return [message_of[r["memory"]["id"]] for r in response.json()["results"]]


@dataclass
class Figures:
    # (half, category, mode) → [hits, questions]
    hits: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)
    memories: int = 0
    flagged: int = 0
    false_flags: int = 0
    # category → [pairs, earlier flagged by the later write, flagged by any write at or after]
    pairs: dict[str, list[int]] = field(default_factory=dict)
    update_above: list[int] = field(default_factory=lambda: [0, 0])
    original_unflagged: list[int] = field(default_factory=lambda: [0, 0])

    def hit(self, half: str, category: str, mode: str, hit: bool) -> None:
        for h in (half, "all"):
            for c in (category, "all"):
                cell = self.hits.setdefault((h, c, mode), [0, 0])
                cell[0] += hit
                cell[1] += 1


def flagged_ids(chat: Chat, memories: dict[str, dict[str, Any]]) -> set[int]:
    message_of = {memory: message for message, memory in chat.memory_of.items()}
    return {message_of[m["id"]] for m in memories.values()
            if "contradicted" in m["flags"] or m["state"] == "superseded"}


def measure(client: httpx.Client, chat: Chat, figures: Figures) -> None:
    memories = states(client, chat)
    flagged = flagged_ids(chat, memories)
    in_pairs = {i for q in chat.questions if q.pair for i in q.pair}
    figures.memories += len(chat.memory_of)
    figures.flagged += len(flagged)
    figures.false_flags += len(flagged - in_pairs)
    for question in chat.questions:
        for mode in MODES:
            found = recall(client, chat, question, mode)
            figures.hit(chat.half, question.category, mode, bool(set(found) & question.evidence))
        if question.pair is None:
            continue
        earlier, later = question.pair
        if earlier not in chat.memory_of or later not in chat.memory_of:
            continue
        cell = figures.pairs.setdefault(question.category, [0, 0, 0])
        by = chat.flagged_by.get(earlier, set())
        superseded = memories.get(chat.memory_of[earlier], {}).get("state") == "superseded"
        cell[0] += 1
        cell[1] += later in by or superseded
        cell[2] += any(i >= later for i in by) or superseded
        if question.category == "knowledge_update":
            ranked = recall(client, chat, question, "hybrid", limit=50)
            place = {message: rank for rank, message in reversed(list(enumerate(ranked)))}
            above = later in place and place[later] < place.get(earlier, len(ranked))
            figures.update_above[0] += above
            figures.update_above[1] += 1
            original = memories.get(chat.memory_of[earlier], {})
            figures.original_unflagged[0] += (earlier in ranked[:10]
                                              and "contradicted" not in original.get("flags", []))
            figures.original_unflagged[1] += 1


def report(figures: Figures, chats: Sequence[Chat]) -> None:
    categories = sorted({q.category for c in chats for q in c.questions})
    print("\nevidence hit@10        " + "  ".join(f"{m:>7s}" for m in MODES)
          + "   (tuning / reporting / all)")
    for category in [*categories, "all"]:
        cells = []
        for mode in MODES:
            cells.append(" / ".join(
                f"{h / n:.3f}" if (h_n := figures.hits.get((half, category, mode))) and
                (h := h_n[0]) is not None and (n := h_n[1]) else "  -  "
                for half in (*HALVES, "all")))
        count = figures.hits.get(("all", category, "hybrid"), [0, 0])[1]
        print(f"{category:24s} ({count:3d})  " + "   ".join(f"{m}: {c}" for m, c in
                                                         zip(MODES, cells, strict=True)))
    print(f"\nmemories {figures.memories}, flagged contradicted {figures.flagged} "
          f"({figures.flagged / max(figures.memories, 1):.1%}), in no pair {figures.false_flags}"
          f" → false-contradiction rate {figures.false_flags / max(figures.memories, 1):.2%}")
    for category, (pairs, by_later, by_any) in sorted(figures.pairs.items()):
        print(f"{category}: {pairs} pairs, earlier flagged by the later write {by_later} "
              f"({by_later / pairs:.1%}), by any write at or after it {by_any} "
              f"({by_any / pairs:.1%})")
    above, total = figures.update_above
    unflagged, asked = figures.original_unflagged
    if total:
        print(f"knowledge updates: update ranks above the original {above}/{total} "
              f"({above / total:.1%}); original returned unflagged in the top 10 "
              f"{unflagged}/{asked} ({unflagged / asked:.1%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--beam", type=Path, default=None, help="the BEAM folder")
    parser.add_argument("--chats", type=int, default=None, help="only the first N chats")
    parser.add_argument("--only", choices=("100K", "500K"), default=None)
    parser.add_argument("--tune", action="store_true", help="print the fusions tried")
    parser.add_argument("--save-lists", type=Path, default=None,
                        help="with --tune: keep the candidate lists in this file")
    args = parser.parse_args()

    chats = load(beam_dir(args.beam), chats=args.chats, only=args.only)
    print(f"{len(chats)} chats, {sum(len(c.messages) for c in chats)} messages, "
          f"{sum(len(c.questions) for c in chats)} questions", flush=True)
    use_data_dir(Path(tempfile.mkdtemp(prefix="lethe-beam-bench-")))
    from app.core import migrations
    from app.core.runtime import get_runtime

    runtime = get_runtime()
    migrations.upgrade(runtime)
    tenant_id, key = create_tenant("BEAM bench")
    figures = Figures()
    started = time.monotonic()
    with live_api(runtime) as base, httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=300) as client:
        for chat in chats:
            store(client, chat)
            print(f"{chat.name}: {len(chat.memory_of)} stored, "
                  f"{time.monotonic() - started:.0f} s", flush=True)
        for chat in chats:
            measure(client, chat, figures)
    print(f"stored and asked in {time.monotonic() - started:.0f} s")
    report(figures, chats)
    if args.tune:
        tune(tenant_id, chats, args.save_lists)


def tune(tenant_id: uuid.UUID, chats: Sequence[Chat], save: Path | None) -> None:
    from bench import dialogue_bench
    from bench.dialogue_bench import Question as Asked

    questions = [Asked(id=f"{c.name}#{i}", subject=subject(c), text=q.text,
                       evidence=frozenset(c.memory_of[m] for m in q.evidence
                                          if m in c.memory_of),
                       half=c.half, category=q.category)
                 for c in chats for i, q in enumerate(c.questions)]
    identity = {memory: memory for c in chats for memory in c.memory_of.values()}
    lists = dialogue_bench.candidate_lists(tenant_id, questions, identity)
    if save:
        import pickle

        save.write_bytes(pickle.dumps((lists, questions, identity)))
    dialogue_bench.tune(lists, questions, identity)


if __name__ == "__main__":
    main()
