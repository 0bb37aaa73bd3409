"""The mixed load of `bench/load.py`, run by locust in a process of its own (locust patches the
standard library with gevent, which the driver's database and process code must not meet).

Each user sends one request per second: recall 70 %, a write 20 %, a forget (of a memory the
same user wrote) 10 %. With LOAD_KEEP set (`bench/load.py --steady`), a user holding that many
memories of its own forgets its oldest instead of writing: writes and forgets then balance, and
the tenant's data stays the size it was seeded to. Acknowledged writes and forgets, and every
request's time, are written to LOAD_ACKS at the end, for the driver to read back.
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

from locust import HttpUser, constant_throughput, events, task

SUBJECTS = int(os.environ.get("LOAD_SUBJECTS", "20"))
# Memories a user keeps of its own in a steady load; none means no bound (the data grows).
KEEP = int(os.environ["LOAD_KEEP"]) if os.environ.get("LOAD_KEEP") else None
HEADERS = {"Authorization": f"Bearer {os.environ.get('LOAD_KEY', '')}"}
WORDS = ("tea", "coffee", "jazz", "hiking", "Lisbon", "Porto", "oboe", "chess", "bees",
         "sailing", "cats", "dogs", "ramen", "tennis", "poetry", "gardens", "trains", "violin")
QUERIES = ("what does the user like to drink", "where does the user live",
           "which music does the user enjoy", "what are the user's hobbies")
WRITTEN: list[str] = []
FORGOTTEN: list[str] = []
# Forgets sent, answered or not: one cut off when the run stops may still have happened.
SENT_FORGETS: list[str] = []
# (kind, milliseconds, failed) of every request, for the driver's percentiles.
TIMINGS: list[tuple[str, float, bool]] = []
# (kind, what failed) of every failed request.
ERRORS: list[tuple[str, str]] = []


def _subject() -> str:
    return f"user:{random.randrange(SUBJECTS)}"


class Client(HttpUser):
    wait_time = constant_throughput(1)

    def on_start(self) -> None:
        self.own: list[str] = []

    @task(70)
    def recall(self) -> None:
        self._expect(self.client.post("/v1/recall", name="recall", headers=HEADERS,
                                      json={"subject": _subject(),
                                            "query": random.choice(QUERIES)},
                                      catch_response=True), 200)

    @task(20)
    def write(self) -> None:
        if KEEP is not None and len(self.own) >= KEEP:
            self._forget(self.own.pop(0))
            return
        text = f"Enjoys {random.choice(WORDS)} and {random.choice(WORDS)} " \
               f"(note {random.getrandbits(32):x})."
        response = self.client.post("/v1/memories", name="write", headers=HEADERS,
                                    json={"subject": _subject(), "text": text},
                                    catch_response=True)
        if self._expect(response, 201):
            memory_id = response.json()["id"]
            self.own.append(memory_id)
            WRITTEN.append(memory_id)

    @task(10)
    def forget(self) -> None:
        if not self.own:
            self.write()
            return
        self._forget(self.own.pop(random.randrange(len(self.own))))

    def _forget(self, memory_id: str) -> None:
        SENT_FORGETS.append(memory_id)
        response = self.client.delete(f"/v1/memories/{memory_id}", name="forget",
                                      headers=HEADERS, catch_response=True)
        if self._expect(response, 204):
            FORGOTTEN.append(memory_id)

    @staticmethod
    def _expect(response: Any, status: int) -> bool:
        with response:
            if response.status_code != status:
                response.failure(f"{response.status_code}: {response.text[:200]}")
                return False
            response.success()
            return True


@events.request.add_listener
def _timed(name: str, response_time: float, exception: Any = None, **_: Any) -> None:
    TIMINGS.append((name, response_time, exception is not None))
    if exception is not None:
        ERRORS.append((name, str(exception)[:120]))


@events.quitting.add_listener
def _write_acks(**_: Any) -> None:
    with open(os.environ["LOAD_ACKS"], "w") as out:
        json.dump({"written": WRITTEN, "forgotten": FORGOTTEN, "sent_forgets": SENT_FORGETS,
                   "timings": TIMINGS, "errors": ERRORS}, out)
