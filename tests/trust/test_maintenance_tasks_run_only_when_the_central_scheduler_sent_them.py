"""Anyone with the broker URL (a region host) can queue `probes.prune`; it
runs only when the central scheduler sent it. Without the central signature,
with a forged, stale or another task's signature, the ingest worker refuses
it: one warning, a dead letter with the reason, nothing pruned. The same
task sent by the scheduler (SlotScheduler, as beat sends it) runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core import signing

from probes.fleet.maintenance import SALT, central_token
from probes.models import DeadLetter, Measurement
from tests.factories import MeasurementFactory
from tests.support import wait_for

pytestmark = pytest.mark.timeout(180)


def test_prune_without_a_fresh_central_signature_is_refused_and_the_schedulers_runs(
    pipeline, test_broker, probe, region
):
    from latency.celery import app
    from probes.scheduling import SlotScheduler

    old = MeasurementFactory(probe=probe, region=region, scheduled_for=datetime.now(UTC) - timedelta(days=3))
    ingest = pipeline.start_ingest(LATENCY_RETENTION_DAYS=2)
    wait_for(lambda: "ready." in ingest.log(), 60, message="the ingest worker to be ready")

    with time_machine.travel(datetime.now(UTC) - timedelta(hours=2)):
        stale = central_token("probes.prune")
    forged = signing.dumps({"task": "probes.prune"}, key="a region host's guess", salt=SALT)
    sent = {
        "none": {},
        "forged": {"token": forged},
        "stale": {"token": stale},
        "another task's": {"token": central_token("probes.rollup_recent")},
    }
    for kwargs in sent.values():
        pipeline.app.send_task("probes.prune", kwargs=kwargs, queue="maintenance")
    pipeline.app.send_task("probes.rollup_recent", queue="maintenance")

    wait_for(lambda: DeadLetter.objects.count() >= 5, 60, message="five refusals kept")
    assert Measurement.objects.filter(pk=old.pk).exists()  # nothing pruned
    letters = list(DeadLetter.objects.order_by("id"))
    assert {letter.source for letter in letters} == {"maintenance"}
    reasons = [letter.reason for letter in letters]
    assert reasons.count("maintenance task probes.prune arrived without the central signature: not run") == 1
    assert "maintenance task probes.prune carries a bad signature (not the central site's): not run" in reasons
    assert "maintenance task probes.prune carries a signature older than 3600 s: not run" in reasons
    assert "maintenance task probes.prune carries a signature for another task: not run" in reasons
    assert "maintenance task probes.rollup_recent arrived without the central signature: not run" in reasons
    assert {"task": "probes.prune", "token": forged} in [letter.payload for letter in letters]
    assert ingest.log().count("rejected a message from maintenance") == 5

    # As beat sends it: the scheduler's own entry, signed on the way out.
    scheduler = SlotScheduler(app=app)
    try:
        scheduler.apply_entry(scheduler.schedule["prune"], producer=scheduler.producer)
        wait_for(lambda: not Measurement.objects.filter(pk=old.pk).exists(), 60, message="the signed prune to run")
    finally:
        scheduler.close()
    assert DeadLetter.objects.count() == 5
    assert "pruned 1 raw measurements" in ingest.log()
