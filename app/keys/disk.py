"""File writes a key store can rely on: atomic, durable, and removals that leave no key.

Every write reaches the disk (fsync of the file, then of its folder) before it is relied on,
so a crash never leaves a half-written key or loses one that was handed out. A removal
overwrites the file's bytes in place before unlinking it, so the blocks it leaves behind hold
noise. On copy-on-write or wear-levelled storage an overwrite may land elsewhere; that
residue is what KEK rotation (the old KEK destroyed) makes unreadable.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def make_folder(path: Path) -> None:
    """``path`` (its parent exists), mode 0700."""
    if not path.is_dir():
        path.mkdir(mode=FOLDER_MODE, exist_ok=True)
        os.chmod(path, FOLDER_MODE)
        sync_folder(path.parent)


def sync_folder(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temporary(folder: Path, data: bytes) -> str:
    fd, temporary = tempfile.mkstemp(prefix=".tmp-", dir=folder)  # 0600 from the first byte
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return temporary


def create_new(path: Path, data: bytes) -> bool:
    """Write ``path`` unless it exists: True when this call wrote it. Linked into place from a
    complete temporary file, so a reader never sees a partial one and of two writers racing,
    one wins and the other reads the winner's."""
    temporary = _temporary(path.parent, data)
    try:
        os.link(temporary, path)
        created = True
    except FileExistsError:
        created = False
    finally:
        os.unlink(temporary)
    sync_folder(path.parent)
    return created


def replace(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Write ``path`` whole, replacing it atomically. The replaced bytes are not overwritten:
    use this only where they are worthless without a key that is destroyed next (rotation).
    Without ``sync`` the caller syncs the folder before it relies on the new file."""
    temporary = _temporary(path.parent, data)
    try:
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    if sync:
        sync_folder(path.parent)


def shred(path: Path) -> bool:
    """Overwrite ``path`` with random bytes, fsync, unlink, fsync its folder: True when there
    was a file. The same inode is overwritten, so every name linked to it is covered."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except FileNotFoundError:
        return False
    try:
        size = os.fstat(fd).st_size
        os.write(fd, os.urandom(size))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.unlink(path)
    sync_folder(path.parent)
    return True
