"""One event loop and one engine per region-worker process.

Celery's thread pool gives each run a thread; the thread only waits while
the call itself runs on this shared loop. So hundreds of probes are in flight
on one loop, and warm connections (which belong to a loop) are reused
across scheduled runs.
"""

from __future__ import annotations

import asyncio
import threading

from probes.engine import Engine, Measurement, ProbeSpec

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_engine: Engine | None = None


def new_loop() -> asyncio.AbstractEventLoop:
    # uvloop: less per-event overhead, so more probes in flight before the
    # loop falls behind (kernel receive stamps keep the figures right anyway).
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _start() -> tuple[asyncio.AbstractEventLoop, Engine]:
    global _loop, _engine
    with _lock:
        if _loop is None or not _loop.is_running():
            loop = new_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=run, name="probe-loop", daemon=True).start()
            ready.wait()
            _loop = loop
            _engine = Engine()
        return _loop, _engine


def run_probe(spec: ProbeSpec) -> Measurement:
    loop, engine = _start()
    future = asyncio.run_coroutine_threadsafe(engine.measure(spec), loop)
    # The engine enforces the call's deadline itself; this bound only guards
    # against a wedged loop.
    return future.result(timeout=spec.timeout_s + 30)
