"""The ingest worker, the scheduler and a region worker, each started with LATENCY_HEALTH_PORT as a runner starts
them: /healthz answers 200, /readyz 200 once its loop beats (the web's JSON shape), any other path 404; on SIGTERM
/readyz says it is shutting down and the process exits with status 0 within the stop timeout deploy/processes.toml
gives it."""

from __future__ import annotations

import pytest

from tests.worker_health.support import ask, health_env, running, sigterm_to_exit, stop_seconds, wait_until_ready

pytestmark = pytest.mark.timeout(240)

REGION = "test-health-lagos"


def start(pipeline, llm_probe, name: str, env: dict[str, str]):
    if name == "ingest":
        return pipeline.start_ingest(**env)
    if name == "scheduler":
        llm_probe(slug=REGION, interval=10)
        return pipeline.start_scheduler(**env)
    return pipeline.start_region(REGION, **env)


@pytest.mark.parametrize("name", ["ingest", "scheduler", "worker"])
def test_a_worker_answers_healthz_and_readyz_and_exits_0_on_sigterm(pipeline, llm_probe, name):
    port, env = health_env()
    proc = start(pipeline, llm_probe, name, env)
    ready = wait_until_ready(proc, port)
    loop = "tick" if name == "scheduler" else "consumer"
    assert ready.body == {"status": "ready", "checks": {loop: "ok"}}
    live = ask(port, "/healthz")
    assert (live.status, live.body) == (200, {"status": "live"})
    assert ask(port, "/readyz", method="HEAD").status == 200
    assert ask(port, "/metrics").status == 404
    running(proc)

    took = sigterm_to_exit(proc, stop_seconds(name))
    print(f"{name}: SIGTERM to exit {took:.2f} s")
