"""/readyz is 200 while the database, every migration and the broker are there, and 503 naming the one that is
not: the class of its error only, never an address or a URL."""

from __future__ import annotations

import socket

import pytest
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

from latency import health

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def migrations_read_again():
    health.forget()
    yield
    health.forget()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_everything_reachable_is_ready(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ready",
        "checks": {"database": "ok", "migrations": "ok", "broker": "ok"},
    }


def test_a_broker_that_refuses_the_connection_is_named(client, settings):
    port = closed_port()
    settings.CELERY_BROKER_URL = f"redis://:s3cret-password@127.0.0.1:{port}/0"
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "not ready"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["broker"] == "unreachable (OperationalError)"
    assert str(port) not in response.content.decode() and "s3cret" not in response.content.decode()


def test_a_migration_not_applied_is_named(client):
    latest = MigrationRecorder.Migration.objects.filter(app="probes").order_by("-name").first()
    assert latest is not None
    latest.delete()  # the test's transaction puts it back
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["migrations"] == "1 not applied: run manage.py migrate"
    assert connection.is_usable()
