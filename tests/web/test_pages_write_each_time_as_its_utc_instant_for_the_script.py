"""Every time a page shows is a <time> element whose datetime is the UTC instant, with a Z, which
static/js/time.js writes in the reader's zone; its text, for a reader without scripts, is UTC and says so."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import IncidentFactory, WorkerFactory

STARTED = datetime(2026, 3, 7, 9, 5, 4, 250000, tzinfo=UTC)
TIME = re.compile(r'<time datetime="([^"]+)" data-utc>([^<]+)</time>')


def times(html: str) -> dict[str, str]:
    return dict(TIME.findall(html))


@pytest.mark.django_db
def test_the_incident_page_writes_its_begin_and_end_as_utc_instants(client, viewer, make_region, make_target):
    lagos = make_region(slug="ut-lagos", name="Lagos")
    incident = IncidentFactory(
        target=make_target(name="Timed"),
        regions=[lagos],
        started_at=STARTED,
        opened_at=STARTED + timedelta(minutes=5),
        resolved_at=STARTED + timedelta(minutes=45),
    )
    html = client.get(f"/incidents/{incident.id}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    shown = times(html)
    assert shown["2026-03-07T09:05:04Z"] == "2026-03-07 09:05:04 UTC"
    assert shown["2026-03-07T09:50:04Z"] == "2026-03-07 09:50:04 UTC"
    assert 'id="incident-resolved"><time datetime="2026-03-07T09:50:04Z"' in html


@pytest.mark.django_db
def test_the_region_page_writes_its_workers_last_heartbeat_as_a_utc_instant(client, viewer, make_region):
    lima = make_region(slug="ut-lima", name="Lima")
    WorkerFactory(region=lima, last_seen=STARTED)
    html = client.get(f"/regions/{lima.slug}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    status = html[html.index('id="region-status"') : html.index("</p>", html.index('id="region-status"'))]
    assert times(status) == {"2026-03-07T09:05:04Z": "2026-03-07 09:05:04 UTC"}
