"""The region credential is a secret: nothing the worker writes, from its
first line to its last (at DEBUG, through a run and a stop), contains it or
any 8-character piece of it."""

from __future__ import annotations

from probes.fleet.keys import issue_key
from probes.models import Worker
from probes.worker.protocol import Credential
from tests.support import wait_for


def pieces(credential: str) -> set[str]:
    secret = Credential.secret_part(credential)
    assert len(secret) == 43
    return {secret[i : i + 8] for i in range(len(secret) - 7)}


def test_no_piece_of_the_credential_is_in_the_workers_log(region_host, llm_probe, pipeline):
    probe = llm_probe(slug="test-secret-lagos", interval=10)
    region = probe.regions.get()
    credential = issue_key(region).credential
    region_host.ingest()
    worker = region_host.start(
        "worker",
        "--region",
        region.slug,
        "--loglevel",
        "DEBUG",
        LATENCY_REGION_KEY=credential,
        LATENCY_HEARTBEAT_SECONDS="1",
    )
    wait_for(lambda: " ready." in worker.log(), 90, message="the region worker to be ready")
    pipeline.start_scheduler()
    wait_for(lambda: " succeeded in " in worker.log(), 90, message="a run")
    wait_for(lambda: Worker.objects.filter(region=region, runs__gte=1).exists(), 60, message="a beat after the run")
    worker.stop(timeout=90)
    log = worker.log_path.read_text(errors="replace")  # the whole log, not the tail
    assert "connected: " in log
    assert credential not in log
    found = [piece for piece in pieces(credential) if piece in log]
    assert found == [], f"{len(found)} pieces of the credential are in the log"
