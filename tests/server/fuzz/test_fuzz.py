"""Nothing a client sends stops the broker: a seeded mutation fuzz of every served API.

`make test` runs a short run with a fixed seed; `make fuzz` a long one
(KCSIM_FUZZ_FRAMES, KCSIM_FUZZ_SEED choose its size and seed; a fresh seed
each time unless given). Every run prints its seed, and a failing run names it
so it can be replayed.
"""

from __future__ import annotations

import os
import secrets
from typing import TYPE_CHECKING

import pytest

from .harness import FuzzRun

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.conftest import KcsimProcess

SHORT_RUN_FRAMES = 20_000
SHORT_RUN_SEED = 1249

pytestmark = pytest.mark.timeout(3600)


def settings() -> tuple[int, int]:
    frames = int(os.environ.get("KCSIM_FUZZ_FRAMES", SHORT_RUN_FRAMES))
    raw_seed = os.environ.get("KCSIM_FUZZ_SEED")
    if raw_seed:
        return frames, int(raw_seed)
    return frames, SHORT_RUN_SEED if frames == SHORT_RUN_FRAMES else secrets.randbelow(2**31)


def test_mutated_frames_never_stop_the_broker(
        kcsim_factory: Callable[..., KcsimProcess], tmp_path: Path) -> None:
    frames, seed = settings()
    print(f"\nfuzz seed={seed} frames={frames} (replay: KCSIM_FUZZ_SEED={seed}"
          f" KCSIM_FUZZ_FRAMES={frames})", flush=True)
    # Durable writes are flushed on an interval: the good client's waits measure the
    # broker, not this machine's fsync.
    server = kcsim_factory(fsync="interval")
    result = FuzzRun(server, frames, seed, tmp_path).run()
    print(result.summary(), flush=True)
    assert not result.failures, (
        f"fuzz seed {seed} failed (replay with KCSIM_FUZZ_SEED={seed}"
        f" KCSIM_FUZZ_FRAMES={frames}):\n  " + "\n  ".join(result.failures))
