"""A silence created in the admin over time already counted (or moved, or deleted) changes the class of calls
counted before it existed: the objectives that exclude silences and cover its target are emptied and rebuilt, and
the rebuild excludes the calls in it. Objectives counting silences, and silences that start later, leave the
counts alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.models import ServiceLevelObjective, Silence
from probes.slos.rebuild import rebuild
from tests.factories import ProbeFactory, ServiceLevelObjectiveFactory
from tests.slos_counting.conftest import counts, current, hour_ago, ingest


def _add_silence(admin_client, capture, target, starts_at: datetime, ends_at: datetime) -> None:
    data = {
        "target": target.pk,
        "starts_at_0": f"{starts_at:%Y-%m-%d}",
        "starts_at_1": f"{starts_at:%H:%M:%S}",
        "ends_at_0": f"{ends_at:%Y-%m-%d}",
        "ends_at_1": f"{ends_at:%H:%M:%S}",
        "reason": "maintenance",
    }
    with capture(execute=True):
        response = admin_client.post("/admin/probes/silence/add/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else response


@pytest.mark.django_db(transaction=True)
def test_a_silence_over_counted_calls_recounts_only_the_objectives_excluding_silences(
    admin_client, django_capture_on_commit_callbacks
):
    probe = ProbeFactory()
    region = probe.regions.get()
    excluding = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    counting = current(ServiceLevelObjectiveFactory(targets=[probe.target], exclude_silences=False))
    start = hour_ago()
    assert ingest(probe, region, [(start + timedelta(minutes=k), {"ttft_ms": 900.0}) for k in range(10)]) == 10
    assert counts(excluding)["bad"] == 10

    _add_silence(
        admin_client,
        django_capture_on_commit_callbacks,
        probe.target,
        datetime.now(UTC) + timedelta(hours=1),
        datetime.now(UTC) + timedelta(hours=2),
    )  # later than every call counted: nothing to recount
    excluding.refresh_from_db()
    assert excluding.counted_condition and counts(excluding)["bad"] == 10

    _add_silence(
        admin_client, django_capture_on_commit_callbacks, probe.target, start, start + timedelta(minutes=4, seconds=30)
    )
    excluding.refresh_from_db()
    counting.refresh_from_db()
    assert (excluding.counted_condition, counts(excluding)["bad"]) == ("", 0)
    assert counting.counted_condition and counts(counting)["bad"] == 10

    rebuild(excluding.id)  # what the queued task runs
    assert counts(excluding) == {"good": 0, "degraded": 0, "bad": 5, "missed": 0, "excluded": 5}

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            f"/admin/probes/silence/{Silence.objects.order_by('starts_at').first().pk}/delete/", {"post": "yes"}
        )
    assert response.status_code == 302
    assert ServiceLevelObjective.objects.get(pk=excluding.pk).counted_condition == ""
