"""The embedded key store: a folder beside the database's files, never inside them.

    <root>/                      0700
      .lock                      rotation excludes creations and destructions
      kek/current                the current KEK's id
      kek/<kek id>.kek           32 random bytes, 0600
      tenants/<tenant id>/tenant.key, <key id>.key
                                 {"kek": id, "wrapped": base64 of RFC 3394 AES key wrap}
      tenants/<tenant id>/<key id>.destroyed
                                 {"destroyed_at": ...}: the entry was destroyed (erasure)

The KEK is created on the store's first use, and only then: a store that loses its KEK while
it holds entries, or whose folder disappears under a running process, is unavailable (503),
never silently started again with keys that open nothing.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import logging
import os
import re
import secrets
import stat
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from cryptography.hazmat.primitives import keywrap

from app.keys import disk
from app.keys.errors import KeyDestroyed, KeyStoreUnavailable, Tampered
from app.keys.store import RotationStep

log = logging.getLogger(__name__)

KEK_BYTES = 32
_NAME = re.compile(r"^[a-z0-9-]{1,64}$")


@contextlib.contextmanager
def _unavailable_on_os_error() -> Iterator[None]:
    try:
        yield
    except (OSError, ValueError, KeyError) as error:
        # The class and errno only: the store's path is configuration, not for every log.
        log.warning("key store unavailable: %s %s", type(error).__name__,
                    getattr(error, "errno", ""))
        raise KeyStoreUnavailable() from error


class FileKeyStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._root = str(root)
        self._keks: dict[str, bytes] = {}
        self._seen = False
        self._init_lock = threading.Lock()

    # -- layout ------------------------------------------------------------------------------
    @property
    def _kek_folder(self) -> Path:
        return self.root / "kek"

    def _kek_path(self, kek_id: str) -> Path:
        return self._kek_folder / f"{kek_id}.kek"

    def _tenant_folder(self, tenant_id: uuid.UUID) -> Path:
        return self.root / "tenants" / str(tenant_id)

    def _entry(self, tenant_id: uuid.UUID, name: str, suffix: str = ".key") -> Path:
        if not _NAME.match(name):
            raise ValueError("not a key store entry name")
        return self._tenant_folder(tenant_id) / f"{name}{suffix}"

    def describe(self) -> str:
        return f"folder {self.root}"

    # -- KEKs --------------------------------------------------------------------------------
    def current_kek_id(self) -> str:
        with _unavailable_on_os_error():
            try:
                kek_id = (self._kek_folder / "current").read_text().strip()
            except FileNotFoundError:
                kek_id = self._first_use()
            self._seen = True
            return kek_id

    def _first_use(self) -> str:
        with self._init_lock:
            if self._seen:
                raise KeyStoreUnavailable()  # it was here and is gone: never start again
            if self._listed():
                log.error("key store holds entries but no current KEK: refusing to create one")
                raise KeyStoreUnavailable()
            self.root.parent.mkdir(parents=True, exist_ok=True)
            disk.make_folder(self.root)
            with self._locked(fcntl.LOCK_EX):
                current = self._kek_folder / "current"
                if current.exists():  # another process created it first
                    return current.read_text().strip()
                disk.make_folder(self._kek_folder)
                kek_id = self._new_kek()
                disk.replace(current, kek_id.encode())
                return kek_id

    def _new_kek(self) -> str:
        kek_id = "kek-" + secrets.token_hex(8)
        disk.create_new(self._kek_path(kek_id), secrets.token_bytes(KEK_BYTES))
        return kek_id

    def _kek(self, kek_id: str) -> bytes:
        kek = self._keks.get(kek_id)
        if kek is None:
            if not _NAME.match(kek_id):
                raise ValueError("not a KEK id")
            kek = self._kek_path(kek_id).read_bytes()
            if len(kek) != KEK_BYTES:
                raise ValueError("KEK file damaged")
            self._keks[kek_id] = kek
        return kek

    def _wrap(self, key: bytes) -> bytes:
        kek_id = self.current_kek_id()
        wrapped = keywrap.aes_key_wrap(self._kek(kek_id), key)
        return json.dumps({"kek": kek_id, "wrapped": base64.b64encode(wrapped).decode()}).encode()

    def _unwrap(self, stored: bytes) -> bytes:
        entry = json.loads(stored)
        kek = self._kek(str(entry["kek"]))
        try:
            return keywrap.aes_key_unwrap(kek, base64.b64decode(entry["wrapped"]))
        except keywrap.InvalidUnwrap:
            raise Tampered("key store entry does not unwrap under its KEK") from None

    @contextlib.contextmanager
    def _locked(self, how: int) -> Iterator[None]:
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, disk.FILE_MODE)
        try:
            fcntl.flock(fd, how)
            yield
        finally:
            os.close(fd)

    def _require_root(self) -> None:
        if not self._seen:
            self.current_kek_id()  # the first use of a store creates it
        if not stat.S_ISDIR(os.stat(self.root).st_mode):
            raise NotADirectoryError(self.root)

    # -- entries -----------------------------------------------------------------------------
    def load(self, tenant_id: uuid.UUID, name: str) -> bytes | None:
        with _unavailable_on_os_error():
            self._require_root()
            if self._entry(tenant_id, name, ".destroyed").exists():
                raise KeyDestroyed()
            try:
                stored = self._entry(tenant_id, name).read_bytes()
            except FileNotFoundError:
                return None
            return self._unwrap(stored)

    def create(self, tenant_id: uuid.UUID, name: str, key: bytes) -> bytes:
        with _unavailable_on_os_error():
            self.current_kek_id()
            with self._locked(fcntl.LOCK_SH):
                path = self._entry(tenant_id, name)
                disk.make_folder(self.root / "tenants")
                disk.make_folder(path.parent)
                if self._entry(tenant_id, name, ".destroyed").exists():
                    raise KeyDestroyed()
                if not disk.create_new(path, self._wrap(key)):
                    return self._unwrap(path.read_bytes())
                if self._entry(tenant_id, name, ".destroyed").exists():
                    disk.shred(path)  # destroyed while this was being written
                    raise KeyDestroyed()
                return key

    def present(self, tenant_id: uuid.UUID, name: str) -> bool:
        # One stat: a destruction writes its tombstone, then removes the entry, so between the
        # two a key is still usable for the milliseconds the erasure has not yet returned.
        # Strings, not Paths: this runs on every use of a cached key.
        return os.path.exists(f"{self._root}/tenants/{tenant_id}/{name}.key")

    def destroy(self, tenant_id: uuid.UUID, name: str) -> datetime:
        with _unavailable_on_os_error():
            self.current_kek_id()
            with self._locked(fcntl.LOCK_SH):
                known = self.destroyed_at(tenant_id, name)
                if known is not None:
                    disk.shred(self._entry(tenant_id, name))  # a crash may have come between
                    return known
                disk.make_folder(self.root / "tenants")
                disk.make_folder(self._tenant_folder(tenant_id))
                at = datetime.now(UTC)
                # The tombstone first: from this moment no process loads or recreates the key.
                disk.create_new(self._entry(tenant_id, name, ".destroyed"),
                                json.dumps({"destroyed_at": at.isoformat()}).encode())
                disk.shred(self._entry(tenant_id, name))
                return self.destroyed_at(tenant_id, name) or at

    def destroyed_at(self, tenant_id: uuid.UUID, name: str) -> datetime | None:
        with _unavailable_on_os_error():
            try:
                stored = self._entry(tenant_id, name, ".destroyed").read_bytes()
            except FileNotFoundError:
                return None
            return datetime.fromisoformat(json.loads(stored)["destroyed_at"])

    def entries(self) -> Iterator[tuple[uuid.UUID, str]]:
        with _unavailable_on_os_error():
            self._require_root()
            return iter(self._listed())

    def _listed(self) -> list[tuple[uuid.UUID, str]]:
        tenants = self.root / "tenants"
        folders = sorted(tenants.iterdir()) if tenants.exists() else []
        return [(uuid.UUID(folder.name), path.name.removesuffix(".key"))
                for folder in folders for path in sorted(folder.glob("*.key"))]

    # -- rotation and checks -----------------------------------------------------------------
    def rotate(self, progress: Callable[[RotationStep], None]) -> RotationStep:
        with _unavailable_on_os_error():
            self.current_kek_id()
            with self._locked(fcntl.LOCK_EX):
                kek_id = self._new_kek()
                # Current first: a crash part-way leaves entries under both KEKs, each naming
                # its own, and the next rotation finishes the job.
                disk.replace(self._kek_folder / "current", kek_id.encode())
                found = list(self.entries())
                step = RotationStep(kek_id=kek_id, done=0, total=len(found))
                progress(step)
                for tenant_id, name in found:
                    path = self._entry(tenant_id, name)
                    disk.replace(path, self._wrap(self._unwrap(path.read_bytes())), sync=False)
                    step = RotationStep(kek_id=kek_id, done=step.done + 1, total=len(found))
                    progress(step)
                # Every new entry durable before any old KEK goes.
                for folder in {self._tenant_folder(tenant_id) for tenant_id, _ in found}:
                    disk.sync_folder(folder)
                for old in self._kek_folder.glob("*.kek"):
                    if old.name != f"{kek_id}.kek":
                        disk.shred(old)
                        self._keks.pop(old.name.removesuffix(".kek"), None)
                return step

    def check(self) -> str:
        # Plain errors with their reasons, not KeyStoreUnavailable: `lethe doctor` prints them.
        if self.root.exists() and not self.root.is_dir():
            raise RuntimeError(f"{self.root} is not a folder")
        current = self._kek_folder / "current"
        if not current.is_file():
            if self._listed():
                raise RuntimeError(f"{self.root} holds wrapped keys but no current KEK")
            return f"{self.describe()}: empty, its KEK is created on first use"
        kek_id = current.read_text().strip()
        if not self._kek_path(kek_id).is_file():
            raise RuntimeError(f"the current KEK {kek_id} is missing: wrapped keys cannot open")
        self._kek(kek_id)
        loose = [str(path) for path in (self.root, self._kek_folder, self._kek_path(kek_id))
                 if os.stat(path).st_mode & 0o077]
        if loose:
            raise RuntimeError(f"readable by others than the owner: {', '.join(loose)}")
        listed = self._listed()
        kek_ids = {json.loads(self._entry(tenant_id, name).read_bytes())["kek"]
                   for tenant_id, name in listed}
        orphaned = sorted(kek for kek in kek_ids if not self._kek_path(kek).is_file())
        if orphaned:
            raise RuntimeError(f"entries wrapped under missing KEKs: {', '.join(orphaned)}")
        return f"{self.describe()}, KEK {kek_id}, {len(listed)} wrapped keys"
