"""What a status page shows of incidents is the updates people wrote for its readers, and of maintenance the
silences marked public: never an incident's own summary, an error text, a target's URL or host, a worker's name,
or a silence nobody published."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.factories import IncidentFactory, IncidentUpdateFactory, SilenceFactory

PRIVATE = [
    "secret-host.internal.example",  # the target's URL
    "worker-host-7.internal",  # a worker
    "upstream connect error: account acme-prod quota",  # an error text
    "threshold 1 s",  # the incident's own summary
    "rotating the key of team blue",  # a silence not marked public
]


def test_only_public_words_are_shown(scene, client):
    now = datetime.now(UTC)
    scene.calls(now - timedelta(hours=1), now, good=50, bad=0)
    scene.probe.measurements.update(
        worker="worker-host-7.internal", error="upstream connect error: account acme-prod quota"
    )
    incident = IncidentFactory(target=scene.target, summary="TTFT p95 is 2.1 s (threshold 1 s)")
    IncidentUpdateFactory(incident=incident, status="identified", text="A provider region is slow; we rerouted.")
    SilenceFactory(target=scene.target, reason="rotating the key of team blue", public=False)
    SilenceFactory(target=scene.target, reason="Provider maintenance window", public=True)

    html = client.get(f"/status/{scene.page.slug}/").content.decode()
    assert "A provider region is slow; we rerouted." in html
    assert "Provider maintenance window" in html
    for private in PRIVATE:
        assert private not in html, private
