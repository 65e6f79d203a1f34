"""What the running region worker process knows about itself: its
configuration (the regions it serves and their credentials), its node name
and its heartbeat counters. Set once by probes.worker.cli before the worker
starts; read by the run task's threads."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from probes.worker.config import WorkerConfig
    from probes.worker.heartbeat import Heartbeats
    from probes.worker.protocol import Credential, Refused

_config: WorkerConfig | None = None
_heartbeats: Heartbeats | None = None
_name = ""


def install(config: WorkerConfig, name: str, heartbeats: Heartbeats | None) -> None:
    global _config, _heartbeats, _name  # one worker per process, by design
    _config, _name, _heartbeats = config, name, heartbeats


def regions() -> tuple[str, ...]:
    return _config.regions if _config is not None else ()


def serves(region: object) -> bool:
    return _config is not None and isinstance(region, str) and region in _config.credentials


def credential(region: str) -> Credential:
    if _config is None:
        raise RuntimeError("the region worker is not configured (start it with `latency-atlas worker`)")
    return _config.credentials[region]


def node_name() -> str:
    return _name


def run_started(region: str) -> None:
    if _heartbeats is not None:
        _heartbeats.run_started(region)


def run_finished(region: str) -> None:
    if _heartbeats is not None:
        _heartbeats.run_finished(region)


def refused_order(queue: str, refusal: Refused) -> None:
    """A run order not run: counted in the heartbeat of the region whose
    queue it came from, and logged when it is the first of its kind."""
    if _heartbeats is not None:
        _heartbeats.note_refusal("order", queue, refusal)
    else:  # a worker without heartbeats (a test's bare app): still said
        import logging

        logging.getLogger("probes.worker.heartbeat").warning("refused a run order from %s: %s", queue, refusal)
