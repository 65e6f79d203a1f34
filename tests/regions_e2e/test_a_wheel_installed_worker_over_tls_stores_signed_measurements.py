"""The worker of a wheel installed in a fresh virtual environment, with only a broker URL over TLS, its CA
and the region's credential, runs the region's slots: the rows are stored, and they are stored because they
were signed (the same broker carries a tampered and an unsigned batch for the same region, and those end in
the dead-letter table, not as rows)."""

from datetime import UTC, datetime, timedelta

import pytest

from probes.models import DeadLetter, Measurement, Worker
from probes.worker.protocol import RESULTS, Credential, seal
from tests.support import wait_for

pytestmark = pytest.mark.timeout(300)


def _payload(probe, region, when):
    return {
        "probe_id": probe.id,
        "target_id": probe.target_id,
        "region_id": region.id,
        "scheduled_for": when.isoformat(),
        "worker": "forger@nowhere",
        "result": {"outcome": "ok", "started_at": when.isoformat(), "total_ms": 1.0},
    }


def test_a_wheel_installed_worker_over_tls_stores_signed_measurements(tls_fleet, llm_probe, credential):
    probe = llm_probe(slug="test-accra", interval=10)
    region = probe.regions.get()
    text = credential(region)
    tls_fleet.start_ingest()
    worker = tls_fleet.start_worker(region.slug, text, guard=True)
    tls_fleet.start_scheduler()

    wait_for(lambda: Measurement.objects.filter(region=region).count() >= 2, 120, message="two measurements")
    assert worker.popen.poll() is None
    rows = list(Measurement.objects.filter(region=region))
    assert {row.outcome for row in rows} == {"ok"}
    # The heartbeat's worker, verified with the region's key, is the one whose name the rows carry.
    seen = wait_for(lambda: Worker.objects.filter(region=region).first(), 60, message="the worker's heartbeat")
    assert seen.key_id == Credential.parse(text).key_id
    assert {row.worker for row in rows} == {seen.name}
    # Nothing of the site's was imported on the region host: no Django, no settings.
    assert tls_fleet.host.imported_django() == []
    assert text not in worker.log()

    # Now a forger on the same broker: the region's real key id on a batch whose body was changed after
    # signing, and an unsigned batch of release 0.1's shape. Neither becomes a row.
    forged_slot = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
    sealed = seal(RESULTS, region.slug, Credential.parse(text), [_payload(probe, region, forged_slot)])
    tampered = {**sealed, "body": sealed["body"].replace("forger@nowhere", "forger@elsewhere")}
    unsigned = [_payload(probe, region, forged_slot + timedelta(seconds=10))]
    before = DeadLetter.objects.count()
    app = tls_fleet.celery_app()
    try:
        for message in (tampered, unsigned):
            app.send_task("probes.ingest", args=[message], queue="ingest")
    finally:
        app.close()
    letters = wait_for(
        lambda: list(DeadLetter.objects.order_by("id")[before:]) if DeadLetter.objects.count() >= before + 2 else None,
        60,
        message="the two forged batches as dead letters",
    )
    reasons = " / ".join(letter.reason for letter in letters)
    assert "signature" in reasons.lower(), reasons
    assert "schema" in reasons.lower(), reasons
    assert not Measurement.objects.filter(scheduled_for__lte=forged_slot + timedelta(seconds=10)).exists()
