"""`manage.py evaluate_alerts --now ISO-TIME` evaluates as if it were then (tests, backfills); a time it cannot
read is a clear error."""

import pytest
from django.core.management import CommandError, call_command

from probes.models import Incident
from tests.alerts.conftest import at
from tests.factories import AlertRuleFactory


def test_two_passes_at_given_times_open_the_incident_stamped_with_that_time(world, capsys):
    lagos, nairobi, _ = world.regions
    for i, region in enumerate((lagos, nairobi)):
        world.calls(region, at(-25), at(0), seed=i, server_wait=1100.0)
    AlertRuleFactory(target=world.target, threshold_ms=1500.0, min_regions=2)

    call_command("evaluate_alerts", "--now", at(-10).isoformat())
    call_command("evaluate_alerts", "--now", "2026-11-20T12:30:00Z")

    out = capsys.readouterr().out
    assert "alert pass at 2026-11-20T12:20:00+00:00: 1 rules, 1 rule-target pairs judged" in out
    assert "1 opened" in out
    assert Incident.objects.get().opened_at == at(0)


def test_a_time_it_cannot_read_is_refused_naming_the_option(db):
    with pytest.raises(CommandError, match="--now"):
        call_command("evaluate_alerts", "--now", "yesterday-ish")
