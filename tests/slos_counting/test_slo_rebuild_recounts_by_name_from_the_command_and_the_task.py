"""`manage.py slo_rebuild NAME` and the rebuild task recount an objective from the raw rows; an unknown name is an
error, and a task without the central signature does not run."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from probes.fleet.maintenance import central_token
from probes.models import ServiceLevelObjective
from probes.slos.tasks import REBUILD_TASK, rebuild_objective
from tests.factories import ProbeFactory, ServiceLevelObjectiveFactory
from tests.slos_counting.conftest import counts, hour_ago, ingest


@pytest.mark.django_db(transaction=True)
def test_the_command_and_the_signed_task_count_the_rows_stored_before_the_objective_existed():
    probe = ProbeFactory()
    region = probe.regions.get()
    assert ingest(probe, region, [(hour_ago(), {"ttft_ms": 200.0})]) == 1
    by_command = ServiceLevelObjectiveFactory(name="chat p99", targets=[probe.target])
    by_task = ServiceLevelObjectiveFactory(targets=[probe.target])
    assert counts(by_command)["good"] == 0  # created after the row: nothing counted it yet

    out = StringIO()
    call_command("slo_rebuild", "chat p99", stdout=out)
    assert "chat p99: 1 calls and 0 missed runs counted" in out.getvalue()
    assert counts(by_command)["good"] == 1

    assert rebuild_objective.apply(kwargs={"objective_id": by_task.id}).get() is None  # unsigned: refused
    assert ServiceLevelObjective.objects.get(id=by_task.id).counted_condition == ""
    signed = {"objective_id": by_task.id, "token": central_token(REBUILD_TASK)}
    assert rebuild_objective.apply(kwargs=signed).get() == 1
    assert counts(by_task)["good"] == 1


@pytest.mark.django_db
def test_an_unknown_name_is_an_error():
    with pytest.raises(CommandError, match="no objective named 'nope'"):
        call_command("slo_rebuild", "nope")
