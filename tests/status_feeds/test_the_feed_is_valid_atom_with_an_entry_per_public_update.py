"""/status/<slug>/feed.atom, read by feedparser as feed readers read it: well-formed Atom 1.0, one entry per public
update of the page's incidents (newest first, each with its own id and a link to it on the page), nothing else of
the incidents, and 404 to anyone who may not read the page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import feedparser

from probes.models import StatusPage
from tests.factories import IncidentFactory, IncidentUpdateFactory, TargetFactory


def test_each_public_update_is_an_entry(scene, client):
    now = datetime.now(UTC)
    incident = IncidentFactory(target=scene.target, summary="TTFT p95 is 2.1 s (threshold 1 s)")
    IncidentUpdateFactory(
        incident=incident, status="investigating", text="Looking into it.", posted_at=now - timedelta(minutes=30)
    )
    IncidentUpdateFactory(
        incident=incident, status="resolved", text="Back to normal.", posted_at=now - timedelta(minutes=5)
    )
    # Another target's incident, not on the page.
    IncidentUpdateFactory(incident=IncidentFactory(target=TargetFactory()), text="Not this page's.")

    response = client.get(f"/status/{scene.page.slug}/feed.atom")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    feed = feedparser.parse(response.content)
    assert not feed.bozo, feed.bozo_exception
    assert feed.version == "atom10"
    assert feed.feed.title == "Acme APIs"
    assert [e.summary for e in feed.entries] == ["Back to normal.", "Looking into it."]
    assert feed.entries[0].title == "chat-eu: Resolved"
    assert len({e.id for e in feed.entries}) == 2
    assert all(e.link.startswith("http://testserver/status/acme/#update-") for e in feed.entries)
    body = response.content.decode()
    assert "threshold 1 s" not in body and "Not this page's." not in body


def test_a_page_that_is_not_public_has_no_feed_for_anyone_signed_out(scene, client):
    StatusPage.objects.filter(id=scene.page.id).update(public=False)
    assert client.get(f"/status/{scene.page.slug}/feed.atom").status_code == 404
