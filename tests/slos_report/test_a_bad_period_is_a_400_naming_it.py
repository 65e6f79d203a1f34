"""A period the report cannot read is a 400 naming the parameter, with the same message on the report page, in
the API and from the CSV: a malformed month, a start without an end (or the reverse), a period with start and
end, an end not after its start, a range longer than 366 days, a time that is no ISO date."""

from __future__ import annotations

import pytest

from tests.api.conftest import bearer
from tests.slos_pages.conftest import element, text

pytestmark = pytest.mark.django_db

BAD = [
    ("period=2026-13", "period", "period must be a calendar month as YYYY-MM, e.g. 2026-11, got '2026-13'"),
    ("period=november", "period", "period must be a calendar month as YYYY-MM, e.g. 2026-11, got 'november'"),
    ("period=9999-12", "period", "period must be a calendar month as YYYY-MM, e.g. 2026-11, got '9999-12'"),
    ("start=2026-11-01", "end", "end is needed with start: give both, or a period such as 2026-11"),
    ("end=2026-11-30", "start", "start is needed with end: give both, or a period such as 2026-11"),
    ("period=2026-11&start=2026-11-01&end=2026-11-30", "period", "give period, or start and end, not both"),
    ("start=2026-11-02&end=2026-11-01", "end", "end must be after start"),
    ("start=2025-01-01&end=2026-01-02", "end", "a report covers at most 366 days; ask for a shorter one"),
    ("start=yesterday&end=2026-11-01", "start",
     "start must be an ISO 8601 date or time, e.g. 2026-11-01, got 'yesterday'"),
    ("period=2026-10&period=2026-11", "period", "period must be given once"),
]  # fmt: skip


@pytest.mark.parametrize(("query", "param", "message"), BAD)
def test_a_bad_period_is_refused_alike_by_the_page_the_api_and_the_csv(signed_in, known, roles, query, param, message):
    slo = known.objective.id
    page = signed_in.get(f"/slos/{slo}/report?{query}")
    assert page.status_code == 400
    shown = text(element(page.content.decode(), "p", 'id="report-error"'))
    assert shown.startswith(message) and f"(parameter {param}" in shown

    api = signed_in.get(f"/api/v1/slos/{slo}/report/?{query}", **bearer(roles.viewer.token))
    assert api.status_code == 400
    assert api.json() == {param: [message]}

    csv = signed_in.get(f"/export/slo-report.csv?slo={slo}&{query}")
    assert csv.status_code == 400
    assert csv.json() == {"error": message, "param": param}


def test_a_year_and_a_day_inclusive_is_the_longest_report(signed_in, known):
    # 2024 is a leap year: 366 days from its first to its last, both included.
    assert signed_in.get(f"/slos/{known.objective.id}/report?start=2024-01-01&end=2024-12-31").status_code == 200
