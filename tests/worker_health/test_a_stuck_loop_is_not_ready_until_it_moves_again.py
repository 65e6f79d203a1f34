"""/readyz answers from the process's own loop, so a loop that is stuck is not ready, and is ready again once it
moves: the scheduler's tick blocked on a table a transaction holds locked, and a Celery consumer (the ingest
worker's, a region worker's) blocked on a broker that went silent without closing its connections (a partition:
the consumer's next broker command waits for an answer that does not come). /healthz still answers meanwhile: the
process is alive, only not doing its work."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.support import TcpProxy, wait_for
from tests.worker_health.support import ask, health_env, running, wait_until_ready

pytestmark = pytest.mark.timeout(300)

STALE_S = "3"  # LATENCY_HEALTH_STALE_SECONDS: short, so that the test waits seconds for the 503, not half a minute
REGION = "test-health-lima"


def not_ready(proc, port: int):
    def check():
        running(proc)
        answer = ask(port, "/readyz")
        return answer if answer is not None and answer.status == 503 else None

    return wait_for(check, 60, message="/readyz 503")


def through(proxy: TcpProxy, url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"127.0.0.1:{proxy.port}"))


def test_a_scheduler_whose_tick_waits_on_a_locked_table_is_not_ready_until_the_lock_goes(pipeline, llm_probe):
    from probes.models import Probe

    llm_probe(slug=REGION, interval=10)
    port, env = health_env(LATENCY_HEALTH_STALE_SECONDS=STALE_S)
    scheduler = pipeline.start_scheduler(**env)
    wait_until_ready(scheduler, port)

    url = pipeline.database_url.replace("postgres://", "postgresql://", 1)
    with psycopg.connect(url) as holder:
        # Every tick reads the probes' regions (probes.scheduling._current): it waits for this lock.
        holder.execute(f"LOCK TABLE {Probe.regions.through._meta.db_table} IN ACCESS EXCLUSIVE MODE")
        stuck = not_ready(scheduler, port)
        assert stuck.body["status"] == "not ready"
        assert stuck.body["checks"]["tick"].startswith("loop stalled for "), stuck.body
        assert ask(port, "/healthz").status == 200
        holder.rollback()
    wait_until_ready(scheduler, port)


@pytest.fixture
def broker_proxy(pipeline):
    host, port = urlsplit(pipeline.redis_url).hostname, urlsplit(pipeline.redis_url).port
    proxy = TcpProxy(host, port)
    yield proxy
    proxy.resume()
    proxy.close()


@pytest.mark.parametrize("name", ["ingest", "worker"])
def test_a_consumer_whose_broker_went_silent_is_not_ready_until_it_answers_again(pipeline, broker_proxy, name):
    port, env = health_env(LATENCY_HEALTH_STALE_SECONDS=STALE_S)
    url = through(broker_proxy, pipeline.redis_url)
    if name == "ingest":
        proc = pipeline.start_ingest(CELERY_BROKER_URL=url, **env)
    else:
        proc = pipeline.start_region(REGION, LATENCY_BROKER_URL=url, **env)
    wait_until_ready(proc, port)

    broker_proxy.stall()
    stuck = not_ready(proc, port)
    assert stuck.body["checks"]["consumer"] != "ok", stuck.body
    assert ask(port, "/healthz").status == 200
    print(f"{name}: {stuck.body}")

    broker_proxy.resume()
    wait_until_ready(proc, port)
