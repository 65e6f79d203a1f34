"""/api/v1/slos/: exclude_rate_limited is off unless given, is set on create and by a partial update, and a
change of it empties the counts made under the old value (it is part of the good call); the SLA report says
which way the objective counts refused calls."""

from __future__ import annotations

import pytest

from probes.models import ServiceLevelObjective, SLOHourCount
from tests.api.conftest import bearer
from tests.factories import ServiceLevelObjectiveFactory, SLOHourCountFactory, TargetFactory

pytestmark = pytest.mark.django_db
LIST = "/api/v1/slos/"


def test_the_exclusion_is_set_read_and_changing_it_empties_the_counts(
    client, roles, django_capture_on_commit_callbacks
):
    target = TargetFactory()
    body = {"name": "chat", "targets": [target.pk], "ttft_threshold_ms": 800, "objective_percent": 99.5}
    auth = bearer(roles.editor.token)
    plain = client.post(LIST, body, content_type="application/json", **auth)
    assert plain.status_code == 201, plain.content
    assert plain.json()["exclude_rate_limited"] is False
    excluding = client.post(
        LIST,
        {**body, "name": "chat without 429s", "exclude_rate_limited": True},
        content_type="application/json",
        **auth,
    )
    assert excluding.status_code == 201, excluding.content
    assert excluding.json()["exclude_rate_limited"] is True
    assert ServiceLevelObjective.objects.get(name="chat without 429s").exclude_rate_limited is True

    objective = ServiceLevelObjective.objects.get(name="chat")
    ServiceLevelObjective.objects.filter(pk=objective.pk).update(counted_condition=objective.condition_fingerprint())
    SLOHourCountFactory(objective=objective)
    url = f"{LIST}{objective.pk}/"
    with django_capture_on_commit_callbacks(execute=True):
        patched = client.patch(url, {"exclude_rate_limited": True}, content_type="application/json", **auth)
    assert patched.status_code == 200 and patched.json()["exclude_rate_limited"] is True
    assert not SLOHourCount.objects.filter(objective=objective).exists()


def test_the_report_says_whether_refused_calls_are_excluded(client, roles):
    objective = ServiceLevelObjectiveFactory(exclude_rate_limited=True)
    report = client.get(f"{LIST}{objective.pk}/report/", **bearer(roles.viewer.token))
    assert report.status_code == 200, report.content
    assert report.json()["exclude_rate_limited"] is True and report.json()["exclude_silences"] is True
