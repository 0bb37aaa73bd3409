"""JSON values sealed under a data key, stored in place of the plain value.

What an operation keeps (a stored answer, a job's payload) and an access export are JSON the
database never reads inside, so each is kept as `{"sealed": <base64>, "key": <key_id>}`:
the key ID lets a reader open it without knowing the subject, and lets an erasure find what
it must drop (the ID is a keyed digest: it names no subject). A value of no subject (a
tenant's settings answer) is sealed under a key derived from the tenant's own key, `key`
`"tenant"`, so nothing is stored readable either way.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

from app.keys import digests, tenant_keys
from app.keys.errors import KeyDestroyed
from app.keys.subjects import SubjectKey, generation_of, key_by_id, subject_key

SEALED = "sealed"
KEY = "key"
TENANT_KEY_ID = "tenant"


def seal(tenant_id: uuid.UUID, subject: str | None, value: Any, *, aad: bytes,
         digest: str | None = None) -> dict[str, str]:
    """``value`` sealed under the data key of ``subject`` (or of the subject whose stored
    digest is ``digest``), or the tenant's sealing key when neither is given."""
    if digest is None and subject is not None:
        digest = digests.subject_digest(tenant_id, subject)
    key = subject_key(tenant_id, digest) if digest is not None else tenant_sealing_key(tenant_id)
    plaintext = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return {SEALED: base64.b64encode(key.seal(plaintext, aad=aad)).decode("ascii"),
            KEY: key.key_id}


def is_sealed(node: Any) -> bool:
    return isinstance(node, dict) and isinstance(node.get(SEALED), str) and KEY in node


def open_value(tenant_id: uuid.UUID, node: dict[str, Any], *, aad: bytes) -> Any:
    """The value ``node`` seals; `KeyDestroyed` once its key is gone (an erasure), `Tampered`
    when it does not authenticate (altered, or moved from another row)."""
    sealed = base64.b64decode(node[SEALED])
    key = _key_by_id(tenant_id, str(node[KEY]), sealed)
    return json.loads(key.open(sealed, aad=aad))


def _key_by_id(tenant_id: uuid.UUID, key_id: str, sealed: bytes) -> SubjectKey:
    if key_id == TENANT_KEY_ID:
        return tenant_sealing_key(tenant_id)
    # The key ID names one generation of the subject's keys; the value says which it is.
    key = key_by_id(tenant_id, key_id, generation_of(sealed))
    if key is None:  # never created, or a restored copy of what an erasure destroyed
        raise KeyDestroyed("no such data key")
    return key


def tenant_sealing_key(tenant_id: uuid.UUID) -> SubjectKey:
    """What seals a value of no subject: a subkey of the tenant's own key."""
    return SubjectKey(TENANT_KEY_ID, tenant_keys.derived(tenant_id, b"sealed-json"))


def seal_tenant_text(tenant_id: uuid.UUID, text: str | None, *, aad: bytes) -> bytes | None:
    """A string of no one subject (a source a hold or an exclusion names) sealed under the
    tenant's sealing key; None stays None."""
    if text is None:
        return None
    return tenant_sealing_key(tenant_id).seal(text.encode("utf-8"), aad=aad)


def open_tenant_text(tenant_id: uuid.UUID, sealed: bytes | None, *, aad: bytes) -> str | None:
    if not sealed:
        return None
    return tenant_sealing_key(tenant_id).open(bytes(sealed), aad=aad).decode("utf-8")
