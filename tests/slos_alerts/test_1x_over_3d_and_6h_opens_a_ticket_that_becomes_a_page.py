"""The workbook's ticket: 2 bad calls in every 100 for three days (2x) is above 1x over 3 days and 6 hours, far
below a page: a ticket, told to the objective's channels. When the last hour starts burning fast the same incident
becomes a page: the timeline says so and the channels are told again (an escalation); when it calms to a ticket
again the timeline says so and nobody is told."""

from __future__ import annotations

from probes.models import Delivery, Incident, IncidentEvent
from probes.readings.slos import objective_row
from tests.factories import NotificationChannelFactory
from tests.slos_alerts.conftest import NOW, at, hours_ago


def test_a_slow_burn_opens_a_ticket_that_becomes_a_page_and_back(scene):
    lagos = scene.regions[0]
    channel = NotificationChannelFactory(name="Ops")
    scene.objective.channels.set([channel])
    # Raw calls after NOW, counted now: the hour counts before NOW hold no raw rows of their own.
    scene.calls(lagos, at(0), at(10), good=10, bad=10)
    scene.calls(lagos, at(10), at(20), good=20, bad=0)
    scene.count()
    scene.hours(lagos, hours_ago(72), NOW, good=98, bad=2)

    row = objective_row(scene.objective.id, NOW)
    assert round(row.burn["3d"], 6) == 2.0 and round(row.burn["6h"], 6) == 2.0

    assert scene.run(0).opened == 1
    incident = Incident.objects.get()
    assert incident.severity == "ticket"
    assert (incident.summary_data["factor"], incident.summary_data["long"]) == (1.0, "3d")
    opened = Delivery.objects.get(transition=Delivery.OPENED)
    assert (opened.channel, opened.state) == (channel, Delivery.PENDING)

    # Ten minutes of half bad calls: 50x over the last hour's calls and the last 5 minutes.
    burst = objective_row(scene.objective.id, at(10))
    assert burst.burn["1h"] > 14.4 and burst.burn["5m"] > 14.4
    report = scene.run(10)
    assert (report.opened, report.moved) == (0, 1)
    incident.refresh_from_db()
    assert incident.severity == "page" and incident.resolved_at is None
    change = incident.events.get(kind=IncidentEvent.SEVERITY_CHANGED)
    assert change.at == at(10)
    assert change.detail == "ticket became a page: burning above 14.4x over 1 h and 5 min"
    escalated = Delivery.objects.get(transition=Delivery.ESCALATED)
    assert (escalated.channel, escalated.state) == (channel, Delivery.PENDING)

    # The burst is over: the last 5 minutes are clean, the 3 days still burn above 1x: a ticket again, unannounced.
    assert scene.run(20).resolved == 0
    incident.refresh_from_db()
    assert incident.severity == "ticket" and incident.resolved_at is None
    kinds = list(incident.events.filter(kind=IncidentEvent.SEVERITY_CHANGED).values_list("detail", flat=True))
    assert kinds[-1] == "page became a ticket: burning above 1x over 3 days and 6 h"
    assert Delivery.objects.count() == 2
