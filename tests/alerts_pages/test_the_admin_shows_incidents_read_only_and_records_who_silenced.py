"""The admin: incidents are read-only (the evaluator writes them) with their timeline inline and a link to the
incident page; a silence added there records who added it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from probes.models import IncidentEvent, Silence
from tests.factories import IncidentEventFactory, IncidentFactory, TargetFactory

pytestmark = pytest.mark.django_db


def test_an_incident_is_read_only_with_its_timeline(admin_client):
    incident = IncidentFactory(summary="TTFT p95 from Lagos to gpt-eu is 2.1 s")
    IncidentEventFactory(incident=incident, kind=IncidentEvent.OPENED, detail="opened by the evaluator")
    listing = admin_client.get(reverse("admin:probes_incident_changelist"))
    assert listing.status_code == 200 and str(incident.rule) in listing.content.decode()
    assert admin_client.get(reverse("admin:probes_incident_add")).status_code == 403

    page = admin_client.get(reverse("admin:probes_incident_change", args=[incident.id]))
    html = page.content.decode()
    assert page.status_code == 200 and "opened by the evaluator" in html
    assert 'name="_save"' not in html  # nothing to save
    assert reverse("incident", args=[incident.id]) in html or "/r/" in html  # "view on site"

    response = admin_client.post(reverse("admin:probes_incident_change", args=[incident.id]), {"summary": "edited"})
    assert response.status_code == 403
    incident.refresh_from_db()
    assert incident.summary.startswith("TTFT p95")


def test_a_silence_added_in_the_admin_records_who_added_it(admin_client, admin_user):
    target = TargetFactory()
    start = datetime(2026, 12, 24, 8, 0, tzinfo=UTC)
    response = admin_client.post(
        reverse("admin:probes_silence_add"),
        {
            "target": target.id,
            "starts_at_0": "2026-12-24",
            "starts_at_1": "08:00:00",
            "ends_at_0": "2026-12-24",
            "ends_at_1": "12:00:00",
            "reason": "Christmas deploy",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    silence = Silence.objects.get()
    assert silence.created_by == admin_user and silence.starts_at == start
    assert silence.ends_at == start + timedelta(hours=4)
