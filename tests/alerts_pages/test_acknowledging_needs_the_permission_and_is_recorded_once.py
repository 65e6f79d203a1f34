"""Acknowledging an incident: only users with probes.acknowledge_incident see the button and may POST; the
acknowledgement is a compare-and-swap, so two POSTs record one acknowledgement and one timeline event."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from probes.models import Incident, IncidentEvent
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db

PERMISSION = "probes.acknowledge_incident"


def test_a_user_without_the_permission_sees_no_button_and_is_refused(client, viewer):
    incident = IncidentFactory()
    html = client.get(reverse("incident", args=[incident.id])).content.decode()
    assert 'id="acknowledge"' not in html
    response = client.post(reverse("incident-acknowledge", args=[incident.id]))
    assert response.status_code == 403
    assert PERMISSION in response.content.decode()
    incident.refresh_from_db()
    assert incident.acknowledged_at is None and not IncidentEvent.objects.exists()


def test_an_anonymous_post_is_sent_to_sign_in(client):
    incident = IncidentFactory()
    response = client.post(reverse("incident-acknowledge", args=[incident.id]))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert Incident.objects.get().acknowledged_at is None


def test_two_posts_record_one_acknowledgement(client, viewer, grant):
    user = grant(viewer, PERMISSION)
    incident = IncidentFactory()
    html = client.get(reverse("incident", args=[incident.id])).content.decode()
    assert 'id="acknowledge"' in html

    first = client.post(reverse("incident-acknowledge", args=[incident.id]), follow=True)
    second = client.post(reverse("incident-acknowledge", args=[incident.id]), follow=True)
    assert first.status_code == second.status_code == 200
    assert "Incident acknowledged." in first.content.decode()
    assert "already acknowledged" in second.content.decode()

    incident.refresh_from_db()
    assert incident.acknowledged_by == user and incident.acknowledged_at is not None
    [event] = IncidentEvent.objects.filter(incident=incident)
    assert event.kind == IncidentEvent.ACKNOWLEDGED and event.user == user
    # Acknowledged: the button is gone, the page says by whom.
    html = second.content.decode()
    assert 'id="acknowledge"' not in html and "by viewer" in html


def test_the_post_needs_the_csrf_token(viewer, grant):
    grant(viewer, PERMISSION)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(viewer)
    incident = IncidentFactory()
    assert strict.post(reverse("incident-acknowledge", args=[incident.id])).status_code == 403
    assert Incident.objects.get().acknowledged_at is None


def test_a_get_does_not_acknowledge(client, viewer, grant):
    grant(viewer, PERMISSION)
    incident = IncidentFactory()
    assert client.get(reverse("incident-acknowledge", args=[incident.id])).status_code == 405
    assert Incident.objects.get().acknowledged_at is None
