"""The Celery side of a worker's health (the ingest worker and a region worker): the beat of its consumer loop, and
a stop on SIGTERM that ends within the runner's stop timeout (deploy/processes.toml: stop_seconds) losing no run.

The beat: a timer on the consumer's own timer, which the consumer's event loop fires (celery-batches flushes from
the same one). It stops beating when that loop is stuck (a call in it that never returns, such as a broker command
on a connection whose peer went silent) and when the consumer stops consuming (a lost broker, while it reconnects);
a task blocked in a pool thread does not stop it, since the worker still takes and holds messages.

The stop: SIGTERM is Celery's warm shutdown (stop consuming, let the tasks in hand finish, exit 0). The thread pool
waits for every task, which for a probe or a maintenance task can be minutes, and Celery's own bounded variant
(soft shutdown, REMAP_SIGTERM=SIGQUIT) is no help here: it exits with status 1, always sleeps its whole timeout,
and cancels tasks through the pool's terminate_job, which the thread pool does not implement. So a watchdog started
by the SIGTERM does it: at HAND_BACK_S it calls the process's hand-back (a region worker cancels the probes still in
flight, and their runs are rejected back to the broker: probes.worker.tasks), and at FORCE_S, if the worker has not
ended by then, it closes the consumer's broker connection, which hands every message not acknowledged back to the
broker (kombu restores them to their queue on Redis; RabbitMQ requeues a closed channel's), and ends the process
with status 0. A message handed back is delivered again and its work done again, which costs nothing: ingest
inserts or ignores on the run's key, and every maintenance task may run twice.

No Django: a region worker uses it too.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable

from celery import Celery, bootsteps, signals

from probes.runtime import health

log = logging.getLogger(__name__)

BEAT_EVERY_S = 1.0
# After SIGTERM: when the runs still in flight are handed back, and when the process ends whatever still runs.
# Both well inside the stop timeout runners give before SIGKILL (deploy/processes.toml: stop_seconds), with room
# for the exit itself.
HAND_BACK_S = 5.0
FORCE_S = 7.0

_state: dict[str, object] = {"consumer": None}


class LoopBeat(bootsteps.StartStopStep):
    """A consumer step: beats from the consumer loop's timer while the consumer runs."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent, **kwargs) -> None:
        super().__init__(parent, **kwargs)
        self.tref = None

    def start(self, parent) -> None:
        _state["consumer"] = parent
        health.beat()
        self.tref = parent.timer.call_repeatedly(BEAT_EVERY_S, health.beat)

    def stop(self, parent) -> None:
        self._cancel()
        current = health.current()
        if current is not None and not current.is_stopping:
            current.idle("not consuming: connecting to the broker")

    def shutdown(self, parent) -> None:
        self._cancel()

    def _cancel(self) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None


def _close_consumer_connection() -> None:
    consumer = _state["consumer"]
    connection = getattr(consumer, "connection", None)
    if connection is None:
        return
    try:
        connection.close()
    except Exception as exc:  # whatever the transport raises on a broken connection: the exit goes on
        log.warning("stop: closing the broker connection failed (%s: %s)", type(exc).__name__, exc)


def _watch_the_stop(hand_back: Callable[[], int] | None) -> None:
    started = time.monotonic()
    if hand_back is not None:
        time.sleep(HAND_BACK_S)
        handed = hand_back()
        if handed:
            log.warning("stop: %d run(s) still in flight after %g s handed back to the broker", handed, HAND_BACK_S)
    time.sleep(max(0.0, FORCE_S - (time.monotonic() - started)))
    log.warning(
        "stop: tasks still running %g s after SIGTERM; their messages go back to the broker and the worker exits",
        FORCE_S,
    )
    _close_consumer_connection()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    # The pool's threads cannot be stopped from outside and the interpreter would wait for them at exit.
    os._exit(0)


def install(app: Celery, *, hand_back: Callable[[], int] | None = None) -> None:
    """Beat from `app`'s consumer loop, and bound the stop after SIGTERM (see the module). Call before the worker
    starts; the beat reaches /readyz only when the process's health server runs (probes.runtime.health)."""
    app.steps["consumer"].add(LoopBeat)

    def on_shutting_down(sig=None, how=None, **_kwargs) -> None:
        # Sent from the signal handler, in the main thread: nothing here may block.
        health.stopping()
        if how == "Warm" and not _state.get("watching"):
            _state["watching"] = True
            threading.Thread(target=_watch_the_stop, args=(hand_back,), name="stop-watchdog", daemon=True).start()

    signals.worker_shutting_down.connect(on_shutting_down, weak=False)
