"""A worker of another release is refused, never misread: its message is a
dead letter whose reason names its schema and release and ours."""

from __future__ import annotations

from probes.models import DeadLetter, Measurement
from probes.worker.protocol import SCHEMA, release
from tests.factories import sealed_results
from tests.trust.conftest import ingest


def test_a_release_0_1_worker_sending_a_bare_list_of_measurements_is_refused_as_schema_1(region, payloads):
    unsigned = payloads(2)
    assert ingest(unsigned, unsigned[0]) == 0  # a list, and one bare measurement: both release 0.1
    assert Measurement.objects.count() == 0
    reasons = set(DeadLetter.objects.values_list("reason", flat=True))
    assert reasons == {
        f"the worker speaks message schema 1 (release 0.1.x); this site reads schema {SCHEMA} "
        f"(release {release()}): upgrade the worker to release {release()}"
    }
    assert DeadLetter.objects.filter(payload=unsigned).exists()
    # Named by what it says: the worker (the region is in the payloads, unsigned).
    assert set(DeadLetter.objects.values_list("worker", flat=True)) == {"worker-lagos-1"}


def test_a_newer_schema_is_refused_naming_both_versions_and_advising_to_upgrade_the_site(region, payloads):
    newer = {**sealed_results(region, payloads(2)), "schema": SCHEMA + 1, "release": "0.3.0"}
    assert ingest(newer) == 0
    letter = DeadLetter.objects.get()
    assert f"schema {SCHEMA + 1} (release 0.3.0)" in letter.reason
    assert f"this site reads schema {SCHEMA} (release {release()})" in letter.reason
    assert "upgrade the central site" in letter.reason
    assert letter.payload == newer and letter.region_id == region.id
