"""Two evaluation processes judge the same burning objective at the same moment (a slow pass overlapping the next,
a backfill beside the beat): both read its state ok, both try to move it; the compare-and-swap lets one through.
One incident, one delivery, one notification queued, and the loser says it left the objective to the other.

The overlap is made certain, not hoped for: the test holds the state's row locked until both processes are waiting
on it, then lets them go together."""

from __future__ import annotations

import json

import psycopg
import pytest

from probes.models import Delivery, Incident, ObjectiveAlertState
from tests.factories import NotificationChannelFactory
from tests.slos_alerts.conftest import at
from tests.support import wait_for

pytestmark = pytest.mark.timeout(180)


def waiting_on_locks(conn) -> int:
    return conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE %s",
        ["%probes_objectivealertstate%"],
    ).fetchone()[0]


def test_two_processes_judging_the_same_objective_at_once_open_one_incident(pipeline, scene):
    lagos = scene.regions[0]
    scene.objective.channels.set([NotificationChannelFactory()])
    scene.calls(lagos, at(-60), at(-5), good=140, bad=40)
    scene.calls(lagos, at(-5), at(0), good=15, bad=5)
    scene.count()
    scene.quiet_hours(lagos, good=2000)
    state = ObjectiveAlertState.objects.create(objective=scene.objective)

    url = pipeline.database_url.replace("postgres://", "postgresql://", 1)
    with psycopg.connect(url) as holder, psycopg.connect(url, autocommit=True) as watcher:
        holder.execute("SELECT id FROM probes_objectivealertstate WHERE id = %s FOR UPDATE", [state.id])
        procs = [pipeline.start("evaluate_alerts", "--now", at(0).isoformat()) for _ in range(2)]
        wait_for(lambda: waiting_on_locks(watcher) == 2, 120, message="both evaluators to wait on the state's row")
        holder.commit()
        for proc in procs:
            wait_for(lambda proc=proc: proc.popen.poll() is not None, 120, message="an evaluator to finish")

    logs = [proc.log() for proc in procs]
    assert all(proc.popen.returncode == 0 for proc in procs), logs
    assert sorted("1 opened" in log for log in logs) == [False, True], logs
    assert any("1 left to a concurrent pass" in log for log in logs), logs
    assert Incident.objects.count() == 1
    assert Delivery.objects.count() == 1
    tasks = [json.loads(raw)["headers"]["task"] for raw in pipeline.redis.lrange("maintenance", 0, -1)]
    assert tasks == ["probes.deliver_notification"]
