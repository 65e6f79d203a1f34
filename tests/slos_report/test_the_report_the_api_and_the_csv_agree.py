"""For one objective and one period, the report page, /api/v1/slos/<id>/report/ and /export/slo-report.csv give
the same numbers: every count, attainment, budget allowed and used (calls and share) and bad minutes of every
target x region and of the total; and the API's status is /slos/'s."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from tests.api.conftest import bearer
from tests.slos_pages.conftest import csv_rows, element, shown, text, this_hour

pytestmark = pytest.mark.django_db
COUNTS = ("eligible", "good", "degraded", "bad", "missed", "excluded", "bad_minutes")
RATIOS = ("attainment", "budget_allowed", "budget_used", "budget_used_ratio")


def test_the_page_the_api_and_the_csv_give_the_same_numbers(signed_in, known, roles):
    start, end = this_hour() - timedelta(days=1), this_hour()
    query = f"start={start:%Y-%m-%dT%H:%MZ}&end={end:%Y-%m-%dT%H:%MZ}"
    objective = known.objective

    api = signed_in.get(f"/api/v1/slos/{objective.id}/report/?{query}", **bearer(roles.viewer.token))
    assert api.status_code == 200, api.content
    body = api.json()
    page = signed_in.get(f"/slos/{objective.id}/report?{query}")
    assert page.status_code == 200
    html = page.content.decode()
    # Last: the async export view closes the test's connection as it ends.
    response, lines = csv_rows(signed_in, f"slo={objective.id}&{query}")
    assert response.status_code == 200

    # One line per target x region in the same order, and the total last.
    assert [(r["target"], r["region"]) for r in lines] == [(r["target"], r["region"]) for r in body["rows"]] + [
        ("", "")
    ]
    assert len(body["rows"]) == len(known.cells)
    for line, row in zip(lines, [*body["rows"], body["total"]], strict=True):
        assert line["slo"] == objective.name
        assert line["period_start"] == body["period_start"].replace("Z", ".000000Z")
        assert line["period_end"] == body["period_end"].replace("Z", ".000000Z")
        for name in COUNTS:
            assert int(line[name]) == row[name], name
        for name in RATIOS:
            assert float(line[name]) == row[name], name
    # The numbers themselves are the stored counts'.
    for (target, region), values in known.cells.items():
        row = next(r for r in body["rows"] if r["target"] == target.name and r["region"] == region.slug)
        for name in ("good", "degraded", "bad", "missed", "excluded"):
            assert row[name] == values[name]
        assert row["bad_minutes"] == bin(values["bad_minutes"]).count("1")

    # The page prints the same rows and the same total.
    for row in body["rows"]:
        tr = re.search(rf'<tr data-target="{row["target_id"]}" data-region="{row["region"]}">.*?</tr>', html, re.S)[0]
        assert_shown(tr, row)
    total = element(html, "section", 'id="report-total"')
    assert_shown(total, body["total"])


def assert_shown(fragment: str, row: dict) -> None:
    def cell(name: str) -> str:
        found = re.search(rf'<(td|dd|span)[^>]*data-figure="{name}"[^>]*>(.*?)</\1>', fragment, re.S)
        assert found, name
        return text(found[2])

    for name in COUNTS:
        assert cell(name) == str(row[name]), name
    assert cell("attainment") == f"{shown(row['attainment'] * 100, 3)} %"
    assert cell("budget_used") == shown(row["budget_used"], 1)
    assert cell("budget_allowed") == shown(row["budget_allowed"], 1)
    assert cell("budget_used_ratio").rstrip(" %") == shown(row["budget_used_ratio"] * 100, 1)


def test_the_apis_status_is_the_objectives_page(signed_in, known, roles):
    answer = signed_in.get(f"/api/v1/slos/{known.objective.id}/status/", **bearer(roles.viewer.token))
    assert answer.status_code == 200
    status = answer.json()
    good, bad = known.total("good"), known.total("bad")
    assert status["status"] == "exhausted"
    assert (status["good"], status["bad"], status["eligible"]) == (good, bad, good + bad)
    assert status["attainment"] == pytest.approx(good / (good + bad))
    assert status["budget_remaining_ratio"] == pytest.approx(1 - (bad / (good + bad)) / 0.01)
    assert set(status["burn"]) == {"5m", "30m", "1h", "6h", "24h", "3d"}
    assert status["burn"]["24h"] == pytest.approx((bad / (good + bad)) / 0.01)
    assert {r["region"] for r in status["regions"]} == {r.slug for r in known.regions}
    row = element(signed_in.get("/slos/").content.decode(), "tr", f'data-slo="{known.objective.id}"')
    assert f"{shown(status['attainment'] * 100, 3)} %" in text(row)
