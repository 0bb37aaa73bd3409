"""An optional judge model for the pairs the supersession rule is unsure about.

Any OpenAI-compatible `POST {LETHE_JUDGE_URL}/chat/completions` endpoint. Off unless
`LETHE_JUDGE_URL` is set. The judge sees the two texts of a pair (so the operator chooses a
model they may send memory text to) and answers with one word. It never decides alone what the
rule is sure of, and any failure — timeout, HTTP error, an answer that is not one of the three
words — leaves the deterministic verdict in place. Logs name the failure's class only, never
the texts.
"""

from __future__ import annotations

import functools
import logging
import re

import httpx

from app.core.config import get_settings
from app.text.supersession import Relation

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "You compare two facts an assistant remembers about the same person. Answer with exactly "
    "one word. contradiction: the new fact means the old one is no longer true (a change, a "
    "correction, a negation). restatement: both say the same thing. unrelated: both can be "
    "true at the same time (different people, things or attributes)."
)
_ANSWER = re.compile(r"\b(contradiction|restatement|unrelated)\b", re.IGNORECASE)


class ChatJudge:
    def __init__(self, base_url: str, model: str, api_key: str | None, *, timeout: float,
                 max_pairs: int) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.max_pairs = max_pairs
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

    def close(self) -> None:
        self._client.close()

    def decide(self, *, old: str, new: str) -> Relation | None:
        """The judge's relation of ``new`` to ``old``; None when it gave no usable answer."""
        body = {
            "model": self.model,
            "temperature": 0,
            "max_tokens": 5,
            "messages": [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": f"Old fact: {old}\nNew fact: {new}\nAnswer:"},
            ],
        }
        try:
            response = self._client.post(self.url, json=body)
            response.raise_for_status()
            answer = response.json()["choices"][0]["message"]["content"]
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
            log.warning("judge gave no answer (%s); the rule's verdict stands",
                        type(exc).__name__)
            return None
        match = _ANSWER.search(answer) if isinstance(answer, str) else None
        if match is None:
            log.warning("judge answered none of the three relations; the rule's verdict stands")
            return None
        return Relation(match.group(1).lower())


@functools.cache
def _judge(url: str, model: str, api_key: str | None, timeout: float,
           max_pairs: int) -> ChatJudge:
    # One client per configuration and process: it pools its connections.
    return ChatJudge(url, model, api_key, timeout=timeout, max_pairs=max_pairs)


def configured() -> ChatJudge | None:
    """The judge the settings name, or None when there is none."""
    settings = get_settings()
    if not settings.judge_url:
        return None
    return _judge(settings.judge_url, settings.judge_model, settings.judge_api_key,
                  settings.judge_timeout_seconds, settings.judge_max_pairs)
