"""A reading's independent statements side by side, each on a database connection of its own: read_window's
days, edge hours and raw rows; the time series' raw, rolled-up and mixed buckets, and each rolled-up read's
totals, histograms and raw counts. Only in the served web process, whose connections come from a pool
(latency.startup turns it on with enable()); everywhere else, tests included, run() runs the jobs one after
another on the caller's connection, as before.

Why: a cold read of every target over days spends most of its time waiting on PostgreSQL for one part and
then merging it in Python while PostgreSQL idles. With the parts on two connections, one part's statement runs
while another's histograms are merged.

What a reader sees does not change: reporting_reads is READ COMMITTED, so each statement already takes its own
snapshot whichever connection runs it; the plan (which rollups are complete) is read before any job starts.

A busy server never waits for a helper: a job goes to a helper thread only while the pool has an idle
connection for it, and a job no helper has started when the caller is done with its own is taken back and run
by the caller. A job may itself call run() (the time series does): it only ever waits for jobs a helper is
already running, so nesting cannot deadlock the helpers.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from django.db import connection

T = TypeVar("T")


class _Helpers:
    executor: ThreadPoolExecutor | None = None


def enable(threads: int) -> None:
    """Run reads side by side on up to `threads` helper threads (0: never). Called once, at the server's start."""
    if _Helpers.executor is not None:
        _Helpers.executor.shutdown(wait=True)
    _Helpers.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="reads") if threads > 0 else None


def disable() -> None:
    enable(0)


def enabled() -> bool:
    """Whether reads may run side by side here (the served web process)."""
    return _Helpers.executor is not None


def _idle_connections() -> int | None:
    """Idle connections in the web process's pool, or None when connections are not pooled."""
    pool = getattr(connection, "pool", None)
    if pool is None:
        return None
    return int(pool.get_stats().get("pool_available", 0))


def _helper(job: Callable[[], T]) -> T:
    from probes.readings.plan import reporting_reads

    try:
        with reporting_reads():
            return job()
    finally:
        # The helper thread's connection goes back to the pool (or is closed) after every job: a thread
        # never holds one between reads.
        connection.close()


def run(jobs: list[Callable[[], T]]) -> list[T]:
    """The jobs' results, in order. The first runs on the caller's thread and connection; the others on helper
    threads where there are helpers and idle connections for them, else on the caller's too."""
    executor = _Helpers.executor
    if executor is None or len(jobs) < 2:
        return [job() for job in jobs]
    idle = _idle_connections()
    spare = len(jobs) - 1 if idle is None else min(len(jobs) - 1, idle)
    helped = {i: executor.submit(_helper, jobs[i]) for i in range(1, 1 + spare)}
    results: dict[int, T] = {0: jobs[0]()}
    # Every job no helper has started yet (all busy, or no idle connection for one) is run here first; only
    # then does the caller wait, and only for jobs a helper is running.
    for i in range(1, len(jobs)):
        if i not in helped or helped[i].cancel():
            results[i] = jobs[i]()
    for i, future in helped.items():
        if not future.cancelled():
            results[i] = future.result()
    return [results[i] for i in range(len(jobs))]
