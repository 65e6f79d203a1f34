"""Two evaluation processes fire the same rule at the same moment (a slow pass overlapping the next, a backfill
beside the beat): both read the pending state, both try to move it; the compare-and-swap lets one through. One
incident, one delivery per channel, one notification queued, and the loser says it left the rule to the other.

The overlap is made certain, not hoped for: the test holds the state's row locked until both processes are
waiting on it, then lets them go together."""

import json

import psycopg
import pytest

from probes.alerts.evaluate import run_pass
from probes.models import AlertState, Delivery, Incident
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory, NotificationChannelFactory
from tests.support import wait_for

pytestmark = pytest.mark.timeout(180)


def waiting_on_locks(conn) -> int:
    return conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE %s",
        ["%probes_alertstate%"],
    ).fetchone()[0]


def test_two_processes_firing_the_same_rule_at_once_open_one_incident(pipeline, world):
    lagos, nairobi, _ = world.regions
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, at(-25), at(0), seed=i, server_wait=1100.0)
    channel = NotificationChannelFactory()
    rule = AlertRuleFactory(target=world.target, threshold_ms=1500.0, min_regions=2, channels=[channel])
    run_pass(at(-10))
    state = AlertState.objects.get(rule=rule)
    assert state.status == AlertState.PENDING

    url = pipeline.database_url.replace("postgres://", "postgresql://", 1)
    with psycopg.connect(url) as holder, psycopg.connect(url, autocommit=True) as watcher:
        holder.execute("SELECT id FROM probes_alertstate WHERE id = %s FOR UPDATE", [state.id])
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
