"""The C allocator's thresholds for a process that hands out large answers.

A Fetch answer of 1 MiB is a fresh 1 MiB buffer (read from the segment, then
encoded), freed once sent. glibc serves a buffer that large with its own `mmap`
and gives it back with `munmap` at free, unless its dynamic threshold happened to
rise above that size first. Whether it rose depends on the process's allocation
history, so two runs of the same server can differ by half of a Fetch's CPU: each
new mapping costs a page fault per 4 KiB touched. `kcsim serve` fixes the
thresholds at start, so that answers up to `MMAP_THRESHOLD` come from the heap and
the heap keeps up to `TRIM_THRESHOLD` of freed memory for the next one. It does so
once the replay is done, after giving back what imports and the replay freed
(`malloc_trim`): a heap that keeps freed memory keeps only what serving frees.

Only the `kcsim serve` process does this: an embedded server lives in its host's
process, whose allocator is the host's business. Elsewhere than glibc this does
nothing.
"""

from __future__ import annotations

import ctypes
import logging

log = logging.getLogger("kcsim.server")

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 16 << 20  # a Fetch answer is mostly max.partition.fetch.bytes (1 MiB)
TRIM_THRESHOLD = 64 << 20


def keep_large_buffers() -> bool:
    """Give back the free heap, then fix glibc's mmap and trim thresholds; False where the C
    library is not glibc."""
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: libc's among them
        mallopt, malloc_trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        return False
    malloc_trim.argtypes = (ctypes.c_size_t,)
    malloc_trim(0)
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    done = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    if not done:
        log.debug("the C library refused mallopt: large buffers stay mapped one by one")
    return done
