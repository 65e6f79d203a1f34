"""Memory for the web process's large arrays, written once at its start and kept.

A read of every target builds arrays of megabytes (a row of 996 int64 counts per series and metric, for each of
hundreds of series), and memory a process has never written costs a page fault per 4 KB page the first time.
glibc gives blocks of 128 KB and more back to the kernel when they are freed (each is a mapping of its own), so a
process paid that again for every new array size it met, and a new process on every first read.

keep_freed() asks glibc (mallopt) to serve blocks up to 32 MB from its heap, to keep up to twice the reserve of
freed heap memory instead of handing it back, and to serve every thread from that one heap, so that the request
threads and the reads' helper threads (probes.readings.side_by_side) all draw on it. reserve() then writes the
reserve once, in blocks, and frees them, so a first read takes far fewer page faults (docs/benchmarks.md,
"The web process at start"). The process's resident memory grows by the reserve.

Only the served web process calls them, at its start (latency.startup.Lifespan), and only with glibc; with
another C library (Alpine's musl, macOS) or a reserve of 0 they do nothing.
"""

from __future__ import annotations

import ctypes
import logging
import platform

import numpy as np

log = logging.getLogger(__name__)

# glibc's mallopt parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

# The largest block glibc will serve from its heap (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit); larger ones are
# always mappings of their own.
HEAP_BLOCKS_MAX = 32 << 20
# The reserve is written in blocks of this size: below HEAP_BLOCKS_MAX, so they come from the heap.
BLOCK = 8 << 20


def _mallopt():
    if platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None


def keep_freed(reserve_mb: int) -> bool:
    """Ask glibc to serve blocks up to 32 MB from one heap shared by every thread and to keep freed memory up
    to twice the reserve. Call it before the process starts the threads that will use the memory (each thread
    that allocated before keeps its own heap). Returns whether glibc took every setting."""
    mallopt = _mallopt()
    if mallopt is None or reserve_mb <= 0:
        return False
    size = reserve_mb << 20
    taken = [
        mallopt(M_MMAP_THRESHOLD, HEAP_BLOCKS_MAX),
        # The memory kept at the top of the heap when it is trimmed, and how much freed memory may lie there
        # before it is: a burst beyond the reserve goes back to the kernel, the reserve stays.
        mallopt(M_TOP_PAD, size),
        mallopt(M_TRIM_THRESHOLD, 2 * size),
        mallopt(M_ARENA_MAX, 1),
    ]
    if not all(taken):
        log.warning("start-up: glibc refused a memory setting (mallopt answers %s)", taken)
    return all(taken)


def reserve(reserve_mb: int) -> int:
    """Write reserve_mb of arrays and free them, so that the heap holds that much memory already faulted in.
    Returns the bytes written (0 where keep_freed does nothing)."""
    if _mallopt() is None or reserve_mb <= 0:
        return 0
    blocks = [np.ones(BLOCK // 8, dtype=np.int64) for _ in range(max(1, (reserve_mb << 20) // BLOCK))]
    written = sum(block.nbytes for block in blocks)
    del blocks
    return written
