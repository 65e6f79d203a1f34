"""What a worker refused (run orders and heartbeat replies the central site
did not sign), as its heartbeats report it, is shown where workers are
listed in the admin."""

from __future__ import annotations

from django.urls import reverse

from tests.factories import WorkerFactory


def test_the_workers_list_shows_refused_orders_and_replies(admin_client):
    WorkerFactory(refused_orders=1234, refused_replies=567, last_refusal="order: not a signed order")
    page = admin_client.get(reverse("admin:probes_worker_changelist")).content.decode()
    assert "1234" in page and "567" in page
    assert "refused orders" in page.lower() and "refused replies" in page.lower()
