"""`lethe keys rotate`: a new key-encryption key for the key store (`lethe doctor` checks it)."""

from __future__ import annotations

import time

import typer

group = typer.Typer(help="the key store (data keys wrapped by a key-encryption key)",
                    no_args_is_help=True)


@group.command("rotate")
def rotate() -> int:
    """Re-wrap every key under a new key-encryption key, then destroy the old one."""
    from app.keys.configured import key_store
    from app.keys.store import RotationStep

    store = key_store()
    print(f"lethe: rotating the key-encryption key of the {store.describe()}", flush=True)
    started = last = time.monotonic()

    def progress(step: RotationStep) -> None:
        nonlocal last
        now = time.monotonic()
        if step.done in (0, step.total) or now - last >= 1.0:
            last = now
            print(f"lethe: {step.done}/{step.total} keys re-wrapped under {step.kek_id}",
                  flush=True)

    step = store.rotate(progress)
    print(f"lethe: rotated: {step.total} keys under {step.kek_id}, older key-encryption keys "
          f"destroyed ({time.monotonic() - started:.1f} s)", flush=True)
    return 0
