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


@pytest.mark.django_db(transaction=True)
def test_two_people_acknowledging_at_once_record_one_acknowledgement(django_user_model, grant):
    import threading

    from django.db import connections

    incident = IncidentFactory()
    clients = []
    for name in ("first", "second"):
        user = grant(
            django_user_model.objects.create_user(username=name, password="a-long-test-password-5512"), PERMISSION
        )
        client = Client()
        client.force_login(user)
        clients.append(client)
    start = threading.Barrier(len(clients))
    statuses = []

    def click(client):
        try:
            start.wait()
            statuses.append(client.post(reverse("incident-acknowledge", args=[incident.id])).status_code)
        finally:
            connections.close_all()  # this thread's connection, so the test database can be dropped

    threads = [threading.Thread(target=click, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert statuses == [302, 302]
    assert IncidentEvent.objects.filter(incident=incident, kind=IncidentEvent.ACKNOWLEDGED).count() == 1
    incident.refresh_from_db()
    assert incident.acknowledged_by.username in ("first", "second")
