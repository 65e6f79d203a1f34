"""A region worker of the worker image, given only a broker URL, its region and the region's credential (as a
mounted secret file), probes the mock LLM server on loopback; the ingest worker and the scheduler of the central
image store its result: a measurement row signed by that worker. Nothing of the host's checkout runs but the test.
The worker container answers an orchestrator's readiness probe on LATENCY_HEALTH_PORT from its consumer's loop."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from devtools.embedded import free_port
from probes.models import Measurement, Worker
from tests.conftest import CHANNEL_PREFIX
from tests.images.containers import new_secret_key, secret_file, stop
from tests.support import wait_for

pytestmark = pytest.mark.timeout(900)
REGION = "test-images-lagos"


def running(proc) -> bool:
    assert proc.popen.poll() is None, f"{proc.args} exited with {proc.popen.returncode}:\n{proc.log()}"
    return True


def readiness(port: int) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as refused:
        return refused.code, json.load(refused)
    except OSError:
        return 0, {}


def test_a_worker_of_the_worker_image_stores_a_measurement_through_the_central_ingest(
    built_images, containers, services, pipeline, llm_probe, settings, tmp_path
):
    # The central key the scheduler signs with is kept under SECRET_KEY: the credential issued here must be made
    # under the key the containers are given.
    settings.SECRET_KEY = new_secret_key()
    probe = llm_probe(slug=REGION, interval=10)
    credential = pipeline.region_key(REGION)
    health_port = free_port()

    central_env = {
        "DATABASE_URL": services.database_url(pipeline.db_settings["NAME"]),
        "REDIS_URL": pipeline.redis_url,
        "LATENCY_CHANNEL_PREFIX": CHANNEL_PREFIX,
        "LATENCY_VISIBILITY_TIMEOUT": "4",
        "SECRET_KEY_FILE": "/run/secrets/secret-key",
    }
    central = containers(
        built_images.central,
        central_env,
        {"/run/secrets/secret-key": secret_file(tmp_path, "secret-key", settings.SECRET_KEY)},
    )
    worker = containers(
        built_images.worker,
        {
            "LATENCY_BROKER_URL": pipeline.redis_url,
            "LATENCY_REGION": REGION,
            "LATENCY_REGION_KEY_FILE": "/run/secrets/region-key",
            "LATENCY_VISIBILITY_TIMEOUT": "4",
            "LATENCY_HEARTBEAT_SECONDS": "2",
            # The provider key the tests' targets name (tests/factories.py), as a region's environment gives it.
            "TEST_API_KEY": "sk-test-images",
            "LATENCY_HEALTH_PORT": str(health_port),
        },
        {"/run/secrets/region-key": secret_file(tmp_path, "region-key", credential)},
    )
    central_entrypoint = built_images.entrypoint(built_images.central)

    ingest = central.start("ingest", [*central_entrypoint, "ingest"])
    wait_for(lambda: running(ingest) and " ready." in ingest.log(), 120, message="the ingest worker to be ready")
    region = worker.start("worker", [*built_images.entrypoint(built_images.worker), "--loglevel", "INFO"])
    wait_for(lambda: running(region) and " ready." in region.log(), 120, message="the region worker to be ready")
    ready = wait_for(
        lambda: running(region) and readiness(health_port)[0] == 200 and readiness(health_port),
        60,
        message="the worker container's /readyz to answer 200",
    )
    assert ready[1].get("status") == "ready", ready
    scheduler = central.start("scheduler", [*central_entrypoint, "scheduler"])

    stored = wait_for(
        lambda: (
            running(scheduler)
            and running(region)
            and Measurement.objects.filter(probe=probe, region__slug=REGION, outcome="ok").first()
        ),
        180,
        message="a measurement probed by the worker image and stored by the central image's ingest",
    )
    assert stored.ttft_ms is not None
    seen = wait_for(
        lambda: Worker.objects.filter(region__slug=REGION).first(), 60, message="the worker's verified heartbeat"
    )
    assert stored.worker == seen.name
    assert credential not in region.log()

    for proc in (scheduler, region, ingest):
        assert stop(proc) == 0, proc.log()
