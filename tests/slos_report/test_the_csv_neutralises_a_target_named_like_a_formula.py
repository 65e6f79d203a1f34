"""slo-report.csv writes a target (or objective) named like a spreadsheet formula with a leading quote, as the
other exports do (probes.exports.csvsafe), and names its columns as the guide lists them."""

from __future__ import annotations

import pytest

from probes.exports.slo_report import SLO_REPORT_COLUMNS
from tests.slos_pages.conftest import csv_rows, make_known

pytestmark = pytest.mark.django_db


def test_a_formula_like_name_is_written_as_text(signed_in):
    known = make_known(name="+SUM(A1)", target_names=("=cmd|' /C calc'!A0", "@evil"))
    response, lines = csv_rows(signed_in, f"slo={known.objective.id}")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith(f'attachment; filename="latency-slo-report-{known.objective.id}_')
    assert list(lines[0]) == list(SLO_REPORT_COLUMNS)
    assert {line["target"] for line in lines} == {"'=cmd|' /C calc'!A0", "'@evil", ""}
    assert {line["slo"] for line in lines} == {"'+SUM(A1)"}
