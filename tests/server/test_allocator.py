"""`kcsim serve` keeps Fetch-sized buffers in the heap: freeing one and taking the next
costs no page faults (glibc only)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

_PROBE = """
import resource, sys
from kcsim.server.shell.allocator import keep_large_buffers
tuned = sys.argv[1] == "tuned"
if tuned and not keep_large_buffers():
    print("unsupported"); raise SystemExit
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
before = faults()
for i in range(200):  # as a Fetch: 1 MiB read from a segment, then an answer built around it
    read = b"x" * (1 << 20)
    answer = b"head" + read
    del read, answer
print(faults() - before)
"""


def _faults(mode: str) -> str:
    return subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="mallopt is glibc's")
def test_fetch_sized_answers_reuse_the_heap_instead_of_faulting_new_pages() -> None:
    tuned = _faults("tuned")
    assert tuned != "unsupported"
    assert int(tuned) < 2000  # untuned, about 100,000: each answer maps and faults in fresh pages
