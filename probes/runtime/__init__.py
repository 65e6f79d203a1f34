"""One event loop and one engine per region-worker process.

Celery's thread pool gives each run a thread; the thread only waits while
the call itself runs on this shared loop. So hundreds of probes are in flight
on one loop, and warm connections (which belong to a loop) are reused
across scheduled runs.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
import time
from concurrent.futures import CancelledError, Future
from contextlib import AbstractContextManager
from datetime import datetime

from anyio.from_thread import BlockingPortal, start_blocking_portal

from probes.engine import Engine, Measurement, ProbeSpec
from probes.engine.envpolicy import WorkerEnv


def new_loop() -> asyncio.AbstractEventLoop:
    # uvloop: less per-event overhead, so more probes in flight before the
    # loop falls behind (kernel receive stamps keep the figures right anyway).
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def run(coro):
    """Run a coroutine to completion on a fresh loop of the same kind."""
    with asyncio.Runner(loop_factory=new_loop) as runner:
        return runner.run(coro)


class BackgroundPortal:
    """A process-wide event loop in a thread of its own, for sync code (Celery
    threads, the ingest's after-commit broadcast) to run coroutines on: anyio's
    blocking portal, started on first use and kept for the process's life,
    because warm connections and channel-layer pools belong to their loop.

    It is closed at interpreter exit (atexit), while its thread can still run:
    left open, the portal's context manager is collected during finalization,
    after daemon threads are frozen, and its clean-up then waits for ever on
    the loop thread (a region worker or a test run that had finished hung at
    exit that way)."""

    def __init__(self, name: str, *, uvloop: bool = False) -> None:
        self._name = name
        self._options = {"use_uvloop": uvloop}
        self._lock = threading.Lock()
        self._portal: BlockingPortal | None = None
        self._context: AbstractContextManager[BlockingPortal] | None = None

    def get(self) -> BlockingPortal:
        with self._lock:
            if self._portal is None:
                # The context manager is kept until close(): collecting it would stop the portal.
                self._context = start_blocking_portal("asyncio", self._options, name=self._name)
                self._portal = self._context.__enter__()
                atexit.register(self.close)
            return self._portal

    def close(self) -> None:
        """Cancel what still runs on the loop and stop its thread; get() starts a new one."""
        with self._lock:
            portal, context = self._portal, self._context
            self._portal = self._context = None
        if portal is None or context is None:
            return
        atexit.unregister(self.close)
        # At exit nothing waits for those tasks' results any more: cancel rather than drain.
        # RuntimeError: the loop has ended already; __exit__ below collects how.
        with contextlib.suppress(RuntimeError):
            portal.call(portal.stop, True)
        context.__exit__(None, None, None)


# uvloop: less per-event overhead, so more probes in flight before the loop
# falls behind (kernel receive stamps keep the figures right anyway).
_probe_portal = BackgroundPortal("probe-loop", uvloop=True)
_engine: Engine | None = None
_engine_lock = threading.Lock()


def install_engine(worker_env: WorkerEnv) -> None:
    """The engine this process runs probes with, given what its operator lets
    targets use (the region worker reads it once, at start)."""
    global _engine  # noqa: PLW0603 -- one engine per process, by design
    with _engine_lock:
        _engine = Engine(worker_env)


def _the_engine() -> Engine:
    global _engine  # noqa: PLW0603 -- one engine per process, by design
    engine = _engine
    if engine is None:
        with _engine_lock:
            if _engine is None:
                # Not installed (a test calling run_probe): this process's environment.
                _engine = Engine()
            engine = _engine
    return engine


class BadRunOrder(ValueError):
    pass


class OtherSchema(BadRunOrder):
    """A run order of another message schema (a scheduler of another release)."""


def order_schema_refusal(message: dict) -> str | None:
    """Why a run order of another schema is refused (naming both schemas and
    releases), or None. Release 0.1's scheduler sent no schema: schema 1."""
    from probes.worker.protocol import SCHEMA, release

    schema = message.get("schema", 1)
    if schema == SCHEMA and not isinstance(schema, bool):
        return None
    theirs = f"schema {str(schema)[:20]} (release {str(message.get('release', '0.1.x'))[:40]})"
    return (
        f"the order speaks message {theirs}; this worker reads schema {SCHEMA} (release {release()}): "
        "run the same release on the central site and the region hosts"
    )


def parse_run_order(args, kwargs) -> tuple[dict, datetime, int]:
    """(message, scheduled_for, interval) of a run order as the scheduler
    sends it: one dict argument. Anything else on a region queue (an old
    version's message, a hand-pushed one) is rejected here, before it can
    fail halfway through a run."""
    if kwargs or not isinstance(args, (list, tuple)) or len(args) != 1 or not isinstance(args[0], dict):
        raise BadRunOrder("expected one argument, a run order")
    message = args[0]
    refusal = order_schema_refusal(message)
    if refusal:
        raise OtherSchema(refusal)
    for key in ("probe_id", "target_id", "region_id"):
        if not isinstance(message.get(key), int) or isinstance(message.get(key), bool):
            raise BadRunOrder(f"{key} is missing")
    if not isinstance(message.get("spec"), dict):
        raise BadRunOrder("spec is missing")
    try:
        scheduled = datetime.fromisoformat(message.get("scheduled_for"))
    except (TypeError, ValueError):
        raise BadRunOrder("scheduled_for is not an ISO 8601 time") from None
    if scheduled.tzinfo is None:
        raise BadRunOrder("scheduled_for has no time zone")
    interval = message.get("interval") or 60
    if not isinstance(interval, int) or isinstance(interval, bool) or interval <= 0:
        raise BadRunOrder("interval is not a positive integer")
    return message, scheduled, interval


class RunHandedBack(Exception):
    """The probe was cancelled by hand_back_runs(): the process is stopping and its run goes back to the broker."""


# The probes in flight, which a stopping worker cancels (hand_back_runs) rather than wait for.
_in_flight: set[Future] = set()
_in_flight_lock = threading.Lock()
_handing_back = threading.Event()


def run_probe(spec: ProbeSpec) -> Measurement:
    if _handing_back.is_set():
        raise RunHandedBack("the worker is stopping")
    future = _probe_portal.get().start_task_soon(_the_engine().measure, spec)
    with _in_flight_lock:
        _in_flight.add(future)
    try:
        # The engine enforces the call's deadline itself; this bound only guards
        # against a wedged loop.
        return future.result(timeout=spec.timeout_s + 30)
    except CancelledError:
        if _handing_back.is_set():
            raise RunHandedBack("the worker is stopping") from None
        raise
    finally:
        with _in_flight_lock:
            _in_flight.discard(future)


def hand_back_runs() -> int:
    """Cancel every probe in flight, and any started from now on: their runs raise RunHandedBack, which the run task
    turns into a rejection back to the broker (probes.worker.tasks). Returns how many were cancelled."""
    _handing_back.set()
    with _in_flight_lock:
        futures = list(_in_flight)
    return sum(1 for future in futures if future.cancel())


_lock = threading.Lock()


class ResultBatcher:
    """Publishes measurements to the ingest queue several per message.

    One message per measurement capped ingest at the broker's per-message
    cost; a list per message lets the ingest worker store thousands a
    second. A run still waits until its measurement is published before it
    returns (and so before it is acknowledged): a worker killed in between
    loses nothing, the run is delivered again.
    """

    def __init__(self, publish, *, max_items: int = 100, max_wait_s: float = 0.2) -> None:
        # publish(region, payloads): one message per region in a batch, since
        # each is signed with that region's credential.
        self._publish = publish
        self._max_items = max_items
        self._max_wait_s = max_wait_s
        self._cond = threading.Condition()
        self._items: list[tuple[str, dict, threading.Event, dict]] = []
        self._thread = threading.Thread(target=self._run, name="result-batcher", daemon=True)
        self._thread.start()

    def submit(self, region: str, payload: dict, timeout: float = 120.0) -> None:
        done = threading.Event()
        box: dict = {}
        with self._cond:
            self._items.append((region, payload, done, box))
            self._cond.notify()
        if not done.wait(timeout):
            raise TimeoutError("the measurement could not be published in time")
        if "error" in box:
            raise box["error"]

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._items:
                    self._cond.wait()
                deadline = time.monotonic() + self._max_wait_s
                while len(self._items) < self._max_items:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                batch, self._items = self._items[: self._max_items], self._items[self._max_items :]
            by_region: dict[str, list[tuple[str, dict, threading.Event, dict]]] = {}
            for item in batch:
                by_region.setdefault(item[0], []).append(item)
            for region, items in by_region.items():
                try:
                    self._publish(region, [payload for _, payload, _, _ in items])
                except Exception as exc:
                    for _, _, _, box in items:
                        box["error"] = exc
                for _, _, done, _ in items:
                    done.set()


_batcher: ResultBatcher | None = None


def result_batcher(publish) -> ResultBatcher:
    global _batcher  # noqa: PLW0603 -- one batcher per worker process, by design
    with _lock:
        if _batcher is None:
            _batcher = ResultBatcher(publish)
        return _batcher
