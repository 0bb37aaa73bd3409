"""The history machine: random sequences of every write, forget and compliance step, run
against the real app and database, each followed by the invariants of DESIGN.md.

`history_machine(client, owner_conn)` returns a `RuleBasedStateMachine` class bound to a
TestClient and an owner connection; every history (one hypothesis example) starts with a
tenant of its own, so nothing is truncated between histories. Tasks run in process, as a
worker would run them (`tasks.apply_ingestion(...)`); running one again is a redelivery.
"""

from __future__ import annotations

import sys
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from app.erasure import tasks as erasure_tasks
from app.ingestion import tasks as ingestion_tasks
from app.maintenance import tasks as maintenance_tasks
from tests.conftest import make_tenant
from tests.harness import probes
from tests.harness.model import (
    LIVE,
    SOURCES,
    SUBJECTS,
    Hold,
    Memory,
    Model,
    Recorded,
    about_phrase,
    words_in,
)

PROBLEM = "https://lethe.dev/problems/"
REPLAYED = "Idempotent-Replayed"
# Moves a history may see without having asked for them: a contradiction on write, a
# dependency or a forgotten parent doubt a live memory.
DRIFT = {"active": {"active", "suspect"}, "suspect": {"suspect"},
         "deprecated": {"deprecated"}, "quarantined": {"quarantined"}}

picks = st.integers(min_value=0, max_value=10_000)


@dataclass(frozen=True)
class Then:
    """A memory at a marked instant, as the model replayed it."""

    subject: str
    state: str
    revision: int
    words: frozenset[str]


def _pick(items: list[Any], index: int) -> Any:
    return items[index % len(items)]


def _problem(response: Any, status: int, slug: str | None = None) -> None:
    assert response.status_code == status, (status, response.status_code, response.text)
    if slug is not None:
        assert response.json()["type"] == PROBLEM + slug, response.text


def _split(text: str) -> list[str]:
    return [part if part.endswith(".") else part + "." for part in text.split(". ") if part]


class Counts:
    """Histories and steps run in this process (the soak prints them)."""

    histories = 0
    steps = 0
    progress_every = 0  # print a progress line every this many histories (0: never)

    @classmethod
    def history_started(cls) -> None:
        cls.histories += 1
        if cls.progress_every and cls.histories % cls.progress_every == 0:
            print(f"progress: {cls.histories} histories, {cls.steps} steps", file=sys.stderr,
                  flush=True)


def history_machine(client: Any, owner_conn: Any) -> type[RuleBasedStateMachine]:
    residue = probes.Residue(owner_conn)

    class History(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            tenant = make_tenant(client, "History")
            self.tenant_id: str = tenant["id"]
            self.app: dict[str, str] = tenant["app"]
            self.compliance: dict[str, str] = tenant["compliance"]
            self.model = Model()
            self.cascade = "flag"
            self.keys = 0
            self.seen_rows: dict[str, tuple[str, int]] = {}
            self.marks: list[tuple[datetime, dict[str, Then]]] = []
            Counts.history_started()

        # -- plumbing ------------------------------------------------------------------

        def _key(self) -> str:
            self.keys += 1
            return f"h-{self.keys}"

        def _send(self, method: str, path: str, body: dict[str, Any] | None, *,
                  key: str | None = None, headers: dict[str, str] | None = None,
                  memory_id: str | None = None) -> Any:
            sent = {**(headers or self.app), **({"Idempotency-Key": key} if key else {})}
            response = client.request(method, path, json=body, headers=sent)
            # Only answers that were stored: a refused request leaves its key unclaimed.
            if key is not None and response.status_code < 300:
                answer = response.json() if response.content else None
                found = memory_id or (answer.get("id") if isinstance(answer, dict) else None)
                self.model.recorded.append(Recorded(method, path, body or {}, key, sent,
                                                    response.status_code, answer, found))
            return response

        def _memory(self, index: int, *states: str) -> Memory | None:
            found = self.model.of_state(*states) if states else list(
                self.model.memories.values())
            return _pick(found, index) if found else None

        def _learn(self, body: dict[str, Any], *, subject: str, source: str | None,
                   key: str | None, derived_from: list[str]) -> Memory:
            sentences = _split(body["text"])
            words = words_in(body["text"], self._all_words())
            memory = Memory(id=body["id"], subject=subject, source=source, key=key,
                            sentences=sentences, words=set(words), revision=body["revision"],
                            derived_from=derived_from, version_words=[set(words)])
            self.model.memories[memory.id] = memory
            return memory

        def _all_words(self) -> set[str]:
            return self.model.vocabulary.issued

        def _text(self, sentences: int, template: int) -> str:
            return " ".join(self.model.vocabulary.sentence(template + offset)[0]
                            for offset in range(sentences))

        def _suspected(self, effects: dict[str, Any]) -> None:
            for memory_id in effects.get("suspected", []):
                memory = self.model.memories.get(memory_id)
                assert memory is not None, f"an unknown memory was doubted: {memory_id}"
                assert memory.state in LIVE, (memory.state, "a dead memory was doubted")
                memory.state = "suspect"

        def _forgotten(self, memory: Memory) -> None:
            if memory.state != "forgotten":
                memory.age_days = 0.0
            self.model.forget(memory)

        def _after_single_forget(self, memory: Memory) -> None:
            """What forgetting one memory does to what was derived from it."""
            if self.cascade != "forget":
                return  # derived memories become suspect: a drift the invariants allow
            for derived_id in sorted(self.model.descendants({memory.id}) - {memory.id}):
                derived = self.model.memories[derived_id]
                if derived.state != "forgotten" and not self.model.held(derived):
                    self._forgotten(derived)

        # -- setup ---------------------------------------------------------------------

        @initialize(cascade=st.sampled_from(["flag", "forget"]), keep_about=st.booleans())
        def settings(self, cascade: str, keep_about: bool) -> None:
            response = client.patch("/v1/settings", headers=self.compliance, json={
                "forget": {"cascade": cascade}, "retractions": {"keep_about": keep_about}})
            assert response.status_code == 200, response.text
            self.cascade = cascade

        # -- writes --------------------------------------------------------------------

        @rule(subject=st.sampled_from(SUBJECTS), sentences=st.sampled_from([1, 3]),
              template=picks, slot=st.sampled_from([None, "home", "job"]),
              keyed=st.booleans(), source=st.sampled_from([None, *SOURCES]),
              derive=st.booleans(), parent=picks)
        def create(self, subject: str, sentences: int, template: int, slot: str | None,
                   keyed: bool, source: str | None, derive: bool, parent: int) -> None:
            body: dict[str, Any] = {"subject": subject, "text": self._text(sentences, template)}
            if slot is not None:
                body["key"] = slot
            if source is not None:
                body["source"] = source
            parents: list[str] = []
            if derive:
                chosen = self._memory(parent, "active", "suspect", "deprecated")
                if chosen is not None:
                    parents = [chosen.id]
                    body["derived_from"] = parents
            self._write(body, key=self._key() if keyed else None, parents=parents)

        def _write(self, body: dict[str, Any], *, key: str | None, parents: list[str],
                   supersedes: Memory | None = None) -> dict[str, Any] | None:
            subject, slot, source = body["subject"], body.get("key"), body.get("source")
            holder = next((m for m in self.model.memories.values()
                           if slot is not None and m.subject == subject and m.key == slot
                           and m.state in LIVE and m is not supersedes), None)
            response = self._send("POST", "/v1/memories", body, key=key)
            if source in self.model.excluded:
                _problem(response, 409, "source-excluded")
                return None
            if holder is not None:
                assert response.status_code == 200, response.text
                answer: dict[str, Any] = response.json()
                assert answer["id"] == holder.id, "a slot write landed on another memory"
                assert answer["revision"] == holder.revision + 1, (answer, holder)
                words = words_in(body["text"], self._all_words())
                holder.revision, holder.versions = answer["revision"], holder.versions + 1
                # A restated slot keeps the source unless the write names one.
                holder.sentences = _split(body["text"])
                holder.source = source if "source" in body else holder.source
                # The new version's provenance is the memory's: forgetting a parent it
                # names reaches the memory as for one first written derived from it.
                holder.derived_from = list(dict.fromkeys(
                    [*holder.derived_from, *(p for p in parents if p != holder.id)]))
                holder.words |= words
                holder.version_words.append(set(words))
                holder.current = None
            else:
                assert response.status_code == 201, response.text
                answer = response.json()
                assert answer["revision"] == 1 and answer["state"] == "active", answer
                self._learn(answer, subject=subject, source=source, key=slot,
                            derived_from=parents)
            expected = [supersedes.id] if supersedes is not None else []
            assert answer["effects"]["superseded"] == expected, answer["effects"]
            if supersedes is not None:
                supersedes.state, supersedes.age_days = "deprecated", 0.0
                supersedes.revision += 1
            self._suspected(answer["effects"])
            return answer

        @precondition(lambda self: bool(self.model.memories))
        @rule(pick=picks, template=picks)
        def supersede(self, pick: int, template: int) -> None:
            old = self._memory(pick, "active", "suspect", "deprecated", "quarantined")
            if old is None:
                return
            body = {"subject": old.subject, "text": self._text(1, template),
                    "supersedes": [old.id]}
            if old.state not in LIVE:
                _problem(self._send("POST", "/v1/memories", body), 422, "invalid-reference")
                return
            self._write(body, key=None, parents=[], supersedes=old)

        @precondition(lambda self: bool(self.model.memories))
        @rule(pick=picks)
        def contradict(self, pick: int) -> None:
            """A new value for what a live memory says ("Now I own a …")."""
            old = self._memory(pick, "active", "suspect")
            if old is None:
                return
            sentence, word = self.model.vocabulary.sentence(0)
            first = old.sentences[0]
            start = next((t for t in _TEMPLATE_STARTS if first.startswith(t)), None)
            if start is not None:
                start = start if start.startswith("I ") else start[0].lower() + start[1:]
                sentence = f"Now {start} {word}."
            self._write({"subject": old.subject, "text": sentence}, key=None, parents=[])

        @precondition(lambda self: bool(self.model.memories))
        @rule(pick=picks)
        def restate(self, pick: int) -> None:
            """The same fact again (what consolidation collapses)."""
            old = self._memory(pick, "active", "suspect")
            if old is None:
                return
            self._write({"subject": old.subject, "text": old.text}, key=self._key(), parents=[])

        @precondition(lambda self: bool(self.model.memories))
        @rule(pick=picks, text=st.booleans(), stale=st.booleans(), keyed=st.booleans(),
              template=picks)
        def patch(self, pick: int, text: bool, stale: bool, keyed: bool, template: int) -> None:
            memory = self._memory(pick)
            if memory is None:
                return
            body: dict[str, Any] = ({"text": self._text(1, template)} if text
                                    else {"metadata": {"n": self.keys}})
            # A stale If-Match is an earlier revision (after a revert, the ABA case).
            revision = memory.revision - (1 if memory.revision > 1 else -1) if stale \
                else memory.revision
            response = self._send("PATCH", f"/v1/memories/{memory.id}", body,
                                  key=self._key() if keyed else None,
                                  headers={**self.app, "If-Match": f'"{revision}"'},
                                  memory_id=memory.id)
            if memory.state == "forgotten":
                _problem(response, 404)
            elif stale:
                _problem(response, 412, "revision-mismatch")
            elif memory.state == "quarantined":
                _problem(response, 409, "memory-not-editable")
            else:
                assert response.status_code == 200, response.text
                self._revised(memory, response.json(), new_version="text" in body)

        def _revised(self, memory: Memory, answer: dict[str, Any], *, new_version: bool) -> None:
            assert answer["revision"] == memory.revision + 1, (answer["revision"], memory)
            assert answer["state"] == memory.state or (
                answer["state"] in DRIFT[memory.state]), (answer["state"], memory.state)
            memory.revision = answer["revision"]
            memory.sentences = _split(answer["text"])
            words = words_in(answer["text"], self._all_words())
            if new_version:
                memory.versions += 1
                memory.version_words.append(words)
                memory.current = None
                memory.words |= words
            else:
                assert words <= memory.words, ("a revert brought back removed text", words)
                # A revert appends no version: an older one is current again.
                memory.current = answer["version"]["seq"] - 1
            assert answer["version"]["seq"] <= memory.versions, answer["version"]

        @precondition(lambda self: any(m.versions > 1 for m in self.model.memories.values()))
        @rule(pick=picks, seq=picks)
        def revert(self, pick: int, seq: int) -> None:
            candidates = [m for m in self.model.memories.values() if m.versions > 1]
            if not candidates:
                return
            memory = _pick(candidates, pick)
            target = seq % memory.versions + 1
            response = self._send("POST", f"/v1/memories/{memory.id}/revert", {"seq": target},
                                  headers={**self.app, "If-Match": f'"{memory.revision}"'})
            if memory.state == "forgotten":
                _problem(response, 404)
            elif memory.state == "quarantined":
                _problem(response, 409, "memory-not-editable")
            else:
                assert response.status_code == 200, response.text
                answer = response.json()
                assert answer["version"]["seq"] == target, answer
                self._revised(memory, answer, new_version=False)

        # -- forgetting ----------------------------------------------------------------

        @precondition(lambda self: bool(self.model.memories))
        @rule(pick=picks, delete=st.booleans(), exclude=st.booleans(), keyed=st.booleans(),
              about=st.booleans())
        def forget(self, pick: int, delete: bool, exclude: bool, keyed: bool,
                   about: bool) -> None:
            memory = self._memory(pick)
            if memory is None:
                return
            body: dict[str, Any] = {"delete": delete, "exclude_source": exclude}
            if about:
                body["about"] = "a private detail"
            response = self._send("POST", f"/v1/memories/{memory.id}/forget", body,
                                  key=self._key() if keyed else None, memory_id=memory.id)
            if not delete and not exclude:
                _problem(response, 422)
                return
            if memory.state == "forgotten":
                if not delete and memory.source is None:
                    assert response.status_code in (200, 422), response.text
                    return
                assert response.status_code == 200, response.text
                assert response.json()["already_forgotten"] is True, response.text
                self._excluded(response.json())
                return
            if not delete and memory.source is None:
                _problem(response, 422)
                return
            if delete and self.model.held(memory):
                _problem(response, 409, "legal-hold")
                return
            assert response.status_code == 200, response.text
            answer = response.json()
            assert answer["forgotten"] is delete and answer["id"] == memory.id, answer
            assert answer["excluded_source"] == (memory.source if exclude else None), answer
            self._excluded(answer)
            if delete:
                memory.revision += 1
                self._forgotten(memory)
                self._after_single_forget(memory)

        def _excluded(self, answer: dict[str, Any]) -> None:
            if answer.get("excluded_source"):
                self.model.excluded.add(answer["excluded_source"])

        @precondition(lambda self: bool(self.model.memories))
        @rule(pick=picks)
        def delete(self, pick: int) -> None:
            memory = self._memory(pick)
            if memory is None:
                return
            response = client.delete(f"/v1/memories/{memory.id}", headers=self.app)
            if memory.state != "forgotten" and self.model.held(memory):
                _problem(response, 409, "legal-hold")
                return
            assert response.status_code == 204, response.text
            if memory.source is not None:  # a tombstone keeps its source: excluded again
                self.model.excluded.add(memory.source)
            if memory.state != "forgotten":
                memory.revision += 1
                self._forgotten(memory)
                self._after_single_forget(memory)

        @precondition(lambda self: bool(self.model.memories))
        @rule(pick=picks, sentence=picks, delete=st.booleans())
        def forget_by_description(self, pick: int, sentence: int, delete: bool) -> None:
            """Forget what one sentence of a memory says: the memory whole (one sentence)
            or that sentence struck (three)."""
            target = self._memory(pick, "active", "suspect", "deprecated", "quarantined")
            if target is None:
                return
            about = about_phrase(_pick(target.sentences, sentence))
            self.model.about_words.setdefault(target.subject, set()).update(
                words_in(about, self._all_words()))
            response = self._send("POST", "/v1/forget", {
                "subject": target.subject, "about": about, "delete": delete})
            assert response.status_code == 200, response.text
            answer = response.json()
            struck = {item["id"]: item["sentences"] for item in answer["struck"]}
            named = set(answer["forgotten"]) | set(answer["quarantined"]) | set(struck) | set(
                answer["held"]) | {item["id"] for item in answer["skipped"]}
            for memory_id in named:
                memory = self.model.memories.get(memory_id)
                assert memory is not None and memory.subject == target.subject, answer
            for memory_id in answer["held"]:
                assert self.model.held(self.model.memories[memory_id]), ("held", answer)
            # A hold forbids taking content (a forget, a strike); an archive quarantine
            # takes none.
            for memory_id in [*answer["forgotten"], *struck]:
                assert not self.model.held(self.model.memories[memory_id]), ("unheld", answer)
            for memory_id in answer["forgotten"]:
                memory = self.model.memories[memory_id]
                memory.revision += 1
                self._forgotten(memory)
                self._after_single_forget(memory)  # the tenant's cascade, as for any forget
            for memory_id in answer["quarantined"]:
                memory = self.model.memories[memory_id]
                if memory.state != "quarantined":
                    memory.state, memory.age_days = "quarantined", 0.0
                    memory.revision += 1
            for memory_id in struck:
                memory = self.model.memories[memory_id]
                # A struck memory derived from a forgotten one may be forgotten by the
                # cascade in the same request (tenant setting `forget.cascade: forget`).
                if memory.state != "forgotten":
                    self._struck(memory, delete=delete)

        def _struck(self, memory: Memory, *, delete: bool) -> None:
            """Sentences struck from a memory: its new text read back; with delete, every
            older version loses them too."""
            read = client.get(f"/v1/memories/{memory.id}", headers=self.app)
            assert read.status_code == 200, read.text
            answer = read.json()
            known = self._all_words()
            now = words_in(answer["text"], known)
            removed = memory.current_words - now
            assert removed, ("a strike removed no marker", memory.text, answer["text"])
            memory.sentences = _split(answer["text"])
            memory.revision = answer["revision"]
            memory.versions += 1
            memory.version_words.append(now)
            memory.current = None
            if delete:
                memory.words -= removed
                memory.version_words = [v - removed for v in memory.version_words]
                self.model.gone_words |= removed

        # -- ingestion -----------------------------------------------------------------

        @rule(subject=st.sampled_from(SUBJECTS), items=st.integers(1, 2), template=picks,
              source=st.sampled_from(SOURCES), override=st.sampled_from([None, *SOURCES]))
        def ingest(self, subject: str, items: int, template: int, source: str,
                   override: str | None) -> None:
            memories: list[dict[str, Any]] = [
                {"text": self._text(1, template + i)} for i in range(items)]
            if override is not None:
                memories[-1]["source"] = override
            body = {"subject": subject, "source": source, "memories": memories}
            response = self._send("POST", "/v1/ingest", body, key=self._key())
            assert response.status_code == 202, response.text
            operation_id = response.json()["operation_id"]
            self.model.ingestions.append(operation_id)
            ingestion_tasks.apply_ingestion(operation_id, self.tenant_id)
            done = client.get(f"/v1/operations/{operation_id}", headers=self.app).json()
            assert done["status"] == "succeeded", done
            result = done["result"]
            refused = {item["item"] for item in result["refused"]}
            for index, item in enumerate(memories):
                cited = item.get("source", source)
                assert (index in refused) == (cited in self.model.excluded), (index, result)
                if index in refused:
                    continue
                memory_id = str(uuid.uuid5(uuid.UUID(operation_id), f"item:{index}"))
                assert memory_id in result["memory_ids"], result
                read = client.get(f"/v1/memories/{memory_id}", headers=self.app)
                assert read.status_code == 200, read.text
                self._learn(read.json(), subject=subject, source=cited, key=None,
                            derived_from=[])

        @precondition(lambda self: bool(self.model.ingestions))
        @rule(pick=picks)
        def redeliver_ingestion(self, pick: int) -> None:
            """The same task message again: nothing changes."""
            operation_id = _pick(self.model.ingestions, pick)
            before = probes.states(owner_conn, self.tenant_id)
            first = client.get(f"/v1/operations/{operation_id}", headers=self.app).json()
            ingestion_tasks.apply_ingestion(operation_id, self.tenant_id)
            assert probes.states(owner_conn, self.tenant_id) == before, "a redelivery changed"
            again = client.get(f"/v1/operations/{operation_id}", headers=self.app).json()
            assert again == first, (first, again)

        # -- maintenance ---------------------------------------------------------------

        def _maintenance(self, job: str) -> dict[str, Any]:
            accepted = client.post(f"/v1/maintenance/{job}", headers=self.compliance)
            assert accepted.status_code == 202, accepted.text
            operation_id = accepted.json()["operation_id"]
            assert maintenance_tasks.run(operation_id, self.tenant_id) is True
            assert maintenance_tasks.run(operation_id, self.tenant_id) is False  # redelivery
            done = client.get(f"/v1/operations/{operation_id}", headers=self.app).json()
            assert done["status"] == "succeeded", done
            result: dict[str, Any] = done["result"]
            return result

        @precondition(lambda self: any(
            len([m for m in self.model.of_state(*LIVE) if m.subject == subject]) > 1
            for subject in SUBJECTS))
        @rule()
        def consolidate(self) -> None:
            before = {m.id: m.state for m in self.model.memories.values()}
            deprecated = self._maintenance("consolidate").get("deprecated", [])
            for memory_id in deprecated:
                memory = self.model.memories.get(memory_id)
                assert memory is not None and before[memory_id] in LIVE, (memory_id, before)
                assert memory.key is None, "a memory holding a slot was collapsed"
                memory.state, memory.age_days = "deprecated", 0.0
                memory.revision += 1
                # The kept memory is derived from each it collapsed (a provenance edge).
                read = client.get(f"/v1/memories/{memory_id}", headers=self.app).json()
                kept = self.model.memories[read["superseded_by"]]
                assert kept.state in LIVE and kept.subject == memory.subject, (read, kept)
                kept.derived_from.append(memory_id)

        @precondition(lambda self: bool(self.model.of_state("deprecated", "quarantined")))
        @rule(days=st.sampled_from([1.0, 31.0, 400.0]))
        def retention(self, days: float) -> None:
            """Let ``days`` pass for the retention job, then run it (30 and 30 days by
            default: deprecated → quarantined → forgotten; a held memory stays quarantined)."""
            owner_conn.execute(
                "UPDATE memory SET state_changed_at = state_changed_at - make_interval("
                "secs => %s), updated_at = updated_at - make_interval(secs => %s) "
                "WHERE tenant_id = %s", (days * 86400, days * 86400, self.tenant_id))
            expected_q, expected_f = set(), set()
            for memory in self.model.memories.values():
                memory.age_days += days
                if memory.state == "deprecated" and memory.age_days >= 30:
                    expected_q.add(memory.id)
                elif (memory.state == "quarantined" and memory.age_days >= 30
                      and not self.model.held(memory)):
                    expected_f.add(memory.id)
            moved = self._maintenance("retention")
            assert set(moved.get("quarantined", [])) == expected_q, (moved, expected_q)
            assert set(moved.get("forgotten", [])) == expected_f, (moved, expected_f)
            for memory_id in expected_q:
                memory = self.model.memories[memory_id]
                memory.state, memory.age_days = "quarantined", 0.0
                memory.revision += 1
            for memory_id in sorted(expected_f):
                memory = self.model.memories[memory_id]
                memory.revision += 1
                self._forgotten(memory)
                self._after_single_forget(memory)  # the tenant's cascade, as for any forget

        # -- holds and erasure ---------------------------------------------------------

        @rule(subject=st.sampled_from([None, *SUBJECTS]), pick=picks)
        def hold(self, subject: str | None, pick: int) -> None:
            memory = self._memory(pick)
            if subject is not None:
                scope: dict[str, Any] = {"subject": subject}
            elif memory is not None:
                scope = {"memory_ids": [memory.id]}
            else:
                return
            response = client.post("/v1/legal-holds", json={"reason": "case", **scope},
                                   headers=self.compliance)
            if subject is None and memory is not None and memory.state == "forgotten":
                _problem(response, 422, "invalid-reference")  # nothing left to hold
                return
            assert response.status_code == 201, response.text
            hold_id = response.json()["id"]
            self.model.holds[hold_id] = Hold(hold_id, subject,
                                             frozenset(scope.get("memory_ids", [])))

        @precondition(lambda self: any(h.active for h in self.model.holds.values()))
        @rule(pick=picks)
        def release(self, pick: int) -> None:
            hold = _pick([h for h in self.model.holds.values() if h.active], pick)
            response = client.delete(f"/v1/legal-holds/{hold.id}", headers=self.compliance)
            assert response.status_code == 204, response.text
            hold.active = False
            # Released: the erasures it stopped run again (the resume job, run here).
            erasure_tasks.resume(self.tenant_id)
            for request_id, subject in self.model.erasures:
                status = self._erasure_status(request_id)
                if status in ("pending", "running"):
                    erasure_tasks.run(request_id, self.tenant_id)
                    self._erased(request_id, subject)

        def _erasure_status(self, request_id: str) -> str:
            read = client.get(f"/v1/erasure-requests/{request_id}", headers=self.compliance)
            assert read.status_code == 200, read.text
            status: str = read.json()["status"]
            return status

        @rule(subject=st.sampled_from(SUBJECTS))
        def erasure(self, subject: str) -> None:
            response = client.post("/v1/erasure-requests", json={"subject": subject},
                                   headers=self.app)
            assert response.status_code in (200, 202), response.text
            request_id = response.json()["id"]
            if response.status_code == 200:
                # The subject's request still open (stopped by a hold): no second cascade.
                assert request_id in {r for r, _ in self.model.erasures}, response.text
                assert self._erasure_status(request_id) == "on_hold", response.text
                return
            self.model.erasures.append((request_id, subject))
            erasure_tasks.run(request_id, self.tenant_id)
            self._erased(request_id, subject)
            before = probes.states(owner_conn, self.tenant_id)
            erasure_tasks.run(request_id, self.tenant_id)  # redelivered: nothing more
            assert probes.states(owner_conn, self.tenant_id) == before

        def _erased(self, request_id: str, subject: str) -> None:
            own = {m.id for m in self.model.memories.values() if m.subject == subject}
            targets = self.model.descendants(own)
            kept = False
            for memory_id in sorted(targets):
                memory = self.model.memories[memory_id]
                if self.model.held(memory):
                    kept = kept or memory.state != "forgotten"
                    continue
                if memory.source is not None and memory.subject == subject:
                    self.model.excluded.add(memory.source)
                if memory.state != "forgotten":
                    memory.revision += 1
                    self.model.erased_words |= memory.words
                    self._forgotten(memory)
            self.model.erased_words |= self.model.about_words.pop(subject, set())
            status = self._erasure_status(request_id)
            assert status == ("on_hold" if kept else "completed"), (status, kept)

        # -- replays -------------------------------------------------------------------

        @precondition(lambda self: bool(self.model.recorded))
        @rule(pick=picks)
        def replay(self, pick: int) -> None:
            """Any earlier keyed request again: the first answer, or its redacted form."""
            first = _pick(self.model.recorded, pick)
            response = client.request(first.method, first.path, json=first.body,
                                      headers=first.headers)
            assert response.status_code == first.status, (first, response.text)
            assert response.headers.get(REPLAYED) == "true", response.headers
            answer = response.json() if response.content else None
            if answer != first.answer:
                assert isinstance(answer, dict) and set(answer) == {"id", "state"}, (
                    first.answer, answer)
                assert answer["id"] == first.memory_id, (first, answer)
                if first.memory_id is None:
                    # An answer naming no memory (an ingestion's 202) about a subject erased
                    # since: sealed under the destroyed key, it replays in the erased form.
                    erased = {subject for _, subject in self.model.erasures}
                    assert first.body.get("subject") in erased, (first, answer)
                else:
                    assert self.model.memories.get(answer["id"]) is not None, answer
            self._no_forbidden_words(repr(answer), "a replayed answer")

        @precondition(lambda self: any(r.path == "/v1/memories" and r.status in (200, 201)
                                       for r in self.model.recorded))
        @rule(pick=picks)
        def redeliver_create(self, pick: int) -> None:
            """A create delivered again after its operation record expired: it lands on the
            same ID and, if that memory was forgotten, stores nothing."""
            first = _pick([r for r in self.model.recorded
                           if r.path == "/v1/memories" and r.status in (200, 201)], pick)
            owner_conn.execute("DELETE FROM operation WHERE tenant_id = %s AND "
                               "idempotency_key = %s", (self.tenant_id, first.key))
            memory = self.model.memories[str(first.memory_id)]
            response = client.post("/v1/memories", json=first.body,
                                   headers={**self.app, "Idempotency-Key": first.key})
            assert response.status_code in (200, 201), response.text
            answer = response.json()
            assert answer["id"] == memory.id, (answer, memory)
            if memory.state == "forgotten":
                assert answer == {"id": memory.id, "state": "forgotten"}, answer
            self.model.recorded = [r for r in self.model.recorded if r.key != first.key]
            self._no_forbidden_words(repr(answer), "a redelivered create's answer")

        # -- point in time -------------------------------------------------------------

        @rule()
        def mark(self) -> None:
            """Remember this instant and the model's replay up to it: every memory not
            forgotten, with its state, revision and the markers of its current version (the
            invariants have just settled the model on the rows, drift included)."""
            time.sleep(0.002)
            instant = datetime.now(UTC)
            time.sleep(0.002)
            self.marks = [*self.marks[-2:], (instant, {
                memory.id: Then(memory.subject, memory.state, memory.revision,
                                frozenset(memory.current_words))
                for memory in self.model.memories.values() if memory.state != "forgotten"})]

        @precondition(lambda self: bool(self.marks))
        @rule(pick=picks)
        def as_of_replays(self, pick: int) -> None:
            """Recall and reads `as_of` a past instant answer what the model replayed up to
            it: the memories live then, each with its state, revision and text then; none
            written after it; and what was forgotten since, at whatever time, never."""
            instant, then = _pick(self.marks, pick)
            gone = self.model.gone_words
            for subject in SUBJECTS:
                response = client.post("/v1/recall", headers=self.app, json={
                    "subject": subject, "query": "own cat work born dish play",
                    "limit": 100, "as_of": instant.isoformat()})
                assert response.status_code == 200, response.text
                answer = response.json()
                expected = {memory_id for memory_id, was in then.items()
                            if was.subject == subject and was.state in LIVE
                            and self.model.memories[memory_id].state != "forgotten"}
                found = {r["memory"]["id"]: r["memory"] for r in answer["results"]}
                assert set(found) == expected, (instant, found, expected)
                for memory_id, shown in found.items():
                    assert shown["state"] == then[memory_id].state, (shown, then[memory_id])
                self._no_forbidden_words(repr(answer), f"recall of {subject} as of {instant}")
            for memory in self.model.memories.values():
                read = client.get(f"/v1/memories/{memory.id}", headers=self.app,
                                  params={"as_of": instant.isoformat()})
                was = then.get(memory.id)
                if was is None or memory.state == "forgotten":
                    assert read.status_code == 404, (memory.id, was, read.text)
                    continue
                assert read.status_code == 200, read.text
                shown = read.json()
                assert (shown["state"], shown["revision"]) == (was.state, was.revision), (
                    shown, was)
                words = words_in(shown["text"], self._all_words())
                # A strike that redacted older versions since took its words from then too.
                assert was.words - gone <= words <= was.words, (shown["text"], was)

        def teardown(self) -> None:
            """At the end of every history, the tenant's audit chain still verifies."""
            verify = client.get("/v1/audit/verify", headers=self.compliance)
            assert verify.status_code == 200 and verify.json()["ok"] is True, verify.text

        # -- invariants ----------------------------------------------------------------

        def _no_forbidden_words(self, text: str, where: str) -> None:
            nowhere, gone = self.model.forbidden()
            found = words_in(text, nowhere | gone)
            assert not found, f"forgotten words {sorted(found)} in {where}"

        @invariant()
        def nothing_comes_back(self) -> None:
            """Every row as the model says; then, for each subject whose rows changed in
            this step, what the API shows of it (a read can only answer differently when a
            row it reads changed: every content change moves the revision)."""
            Counts.steps += 1
            rows = probes.states(owner_conn, self.tenant_id)
            unknown = set(rows) - set(self.model.memories)
            assert not unknown, f"memories nobody made: {unknown}"
            newly_forgotten = []
            for memory in self.model.memories.values():
                state, revision = rows[memory.id]
                if memory.state == "forgotten":
                    assert state == "forgotten", f"{memory.id} came back as {state}"
                else:
                    assert state in DRIFT[memory.state], (memory.id, memory.state, state)
                    if state != memory.state:
                        memory.state, memory.age_days = state, 0.0
                assert revision >= memory.revision, ("revision went back", memory.id,
                                                     memory.revision, revision)
                memory.revision = revision
                if state == "forgotten" and self.seen_rows.get(memory.id, ("",))[0] != state:
                    newly_forgotten.append(memory)
            changed = {m.subject for m in self.model.memories.values()
                       if self.seen_rows.get(m.id) != rows[m.id]}
            self.seen_rows = rows
            for memory in newly_forgotten:
                read = client.get(f"/v1/memories/{memory.id}", headers=self.app)
                assert read.status_code == 404, (memory.id, read.text)
            for subject in sorted(changed):
                self._listed(subject)
                if any(m.subject == subject and m.state not in LIVE
                       for m in self.model.memories.values()):
                    self._recalled(subject)

        def _listed(self, subject: str) -> None:
            listed = client.get(f"/v1/memories?subject={subject}&limit=200", headers=self.app)
            assert listed.status_code == 200, listed.text
            data = listed.json()["data"]
            expected = {m.id: m.state for m in self.model.memories.values()
                        if m.subject == subject and m.state != "forgotten"}
            assert {m["id"]: m["state"] for m in data} == expected, (data, expected)
            self._no_forbidden_words(repr(data), f"the list of {subject}")

        def _recalled(self, subject: str) -> None:
            """Recall, asked with the words of the subject's dead memories and of forgotten
            text: no result may be one of them."""
            nowhere, gone = self.model.forbidden()
            dead = [m for m in self.model.memories.values()
                    if m.subject == subject and m.state not in LIVE]
            query = " ".join(sorted(nowhere | gone)[:6] + [w for m in dead[-3:]
                                                           for w in sorted(m.words)[:2]])
            response = client.post("/v1/recall", headers=self.app, json={
                "subject": subject, "query": query or "own cat work", "limit": 50})
            assert response.status_code == 200, response.text
            answer = response.json()
            for result in answer["results"]:
                found = result["memory"]
                memory = self.model.memories.get(found["id"])
                assert memory is not None and memory.state in LIVE, (found, memory)
                assert found["state"] in LIVE, found
                for old in result["history"]:
                    assert old["state"] == "deprecated", old
                    assert self.model.memories[old["id"]].state == "deprecated", old
            self._no_forbidden_words(repr(answer["results"]), f"recall of {subject}")
            # The retractions may show the caller's own `about` phrase, until an erasure.
            found = words_in(repr(answer["retractions"]), nowhere)
            assert not found, f"erased words {sorted(found)} in the retractions of {subject}"

        @invariant()
        def forgotten_text_is_gone(self) -> None:
            nowhere, gone = self.model.forbidden()
            tables = residue.tables_holding(self.tenant_id, nowhere=nowhere, except_about=gone)
            if tables:
                detail = {table: residue.words_in(self.tenant_id, table, nowhere | gone)
                          for table in tables}
                raise AssertionError(f"forgotten words left in the database: {detail}")

    return History


_TEMPLATE_STARTS = ("I own a", "My cat is called", "I work at", "I was born in",
                    "My favourite dish is", "I play the")
