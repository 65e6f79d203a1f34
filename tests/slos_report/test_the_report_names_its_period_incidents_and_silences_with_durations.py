"""The SLA report says which period it covers (the current month so far when none is asked for, a calendar
month, or a range), from when its counts are exact when the period starts before that, the incidents of the
objective's targets with their durations (an open one's up to the period's end, or now when that is earlier) and
the silences with theirs, excluded or not as the objective says."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import IncidentFactory, SilenceFactory
from tests.slos_pages.conftest import element, text, this_hour

pytestmark = pytest.mark.django_db


def report(client, objective_id: int, query: str = "") -> str:
    page = client.get(f"/slos/{objective_id}/report" + (f"?{query}" if query else ""))
    assert page.status_code == 200
    return page.content.decode()


def test_without_a_period_the_report_is_the_current_month_so_far_and_says_so(signed_in, known):
    html = report(signed_in, known.objective.id)
    now = datetime.now(UTC)
    said = text(element(html, "p", 'id="report-period-text"'))
    assert f"The current month so far ({now:%Y-%m}, UTC)" in said
    assert f'datetime="{now:%Y-%m}-01T00:00:00Z"' in element(html, "p", 'id="report-period-text"')
    assert f"slo={known.objective.id}" in element(html, "a", 'id="report-csv"')


def test_a_calendar_month_is_named_and_its_csv_link_asks_for_it(signed_in, known):
    html = report(signed_in, known.objective.id, "period=2026-02")
    assert "Calendar month 2026-02 (UTC)." in text(element(html, "p", 'id="report-period-text"'))
    assert 'datetime="2026-03-01T00:00:00Z"' in html
    assert f"/export/slo-report.csv?slo={known.objective.id}&amp;period=2026-02" in html


def test_a_period_starting_before_the_counts_are_exact_says_from_when_they_are(signed_in, known):
    exact = known.objective.exact_since
    start = exact - timedelta(days=2)
    html = report(signed_in, known.objective.id, f"start={start:%Y-%m-%d}&end={exact + timedelta(days=1):%Y-%m-%d}")
    note = element(html, "p", 'id="report-partial"')
    assert "The counts are exact since" in text(note)
    assert f'datetime="{exact:%Y-%m-%dT%H:%M:%SZ}"' in note
    assert 'id="report-partial"' not in report(signed_in, known.objective.id, f"start={exact:%Y-%m-%dT%H:%MZ}&end=1h")


def test_incidents_and_silences_are_listed_with_their_durations(signed_in, known):
    end = this_hour()
    start = end - timedelta(days=1)
    target = known.targets[0]
    resolved = IncidentFactory(
        target=target,
        regions=[known.regions[0]],
        started_at=end - timedelta(hours=5),
        opened_at=end - timedelta(hours=5),
        resolved_at=end - timedelta(hours=3, minutes=15),
    )
    began = end - timedelta(hours=2)
    still_open = IncidentFactory(target=target, regions=[known.regions[1]], started_at=began, opened_at=began)
    SilenceFactory(target=target, starts_at=end - timedelta(hours=7), ends_at=end - timedelta(hours=6, minutes=30))
    html = report(signed_in, known.objective.id, f"start={start:%Y-%m-%dT%H:%MZ}&end={end:%Y-%m-%dT%H:%MZ}")
    incidents = element(html, "section", 'id="report-incidents"')
    assert text(element(element(incidents, "tr", f'data-incident="{resolved.id}"'), "td", "duration")) == "1 h 45 min"
    # Open: up to the period's end, which comes before now.
    shown = text(element(element(incidents, "tr", f'data-incident="{still_open.id}"'), "td", "duration"))
    assert shown == "2 h 00 min (still open)"
    silences = element(html, "section", 'id="report-silences"')
    assert "Excluded silences" in text(silences)
    assert "30 min" in text(element(silences, "td", "duration"))
