"""The objective pages, the SLA report and its CSV are for signed-in users, public dashboard or not (they show
incidents and silences); an objective that does not exist is a 404 (the CSV, whose objective is a parameter, a
400 naming it)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from tests.factories import ServiceLevelObjectiveFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("public", [False, True])
def test_a_visitor_not_signed_in_is_sent_to_sign_in(client, public):
    objective = ServiceLevelObjectiveFactory()
    with override_settings(LATENCY_PUBLIC_DASHBOARD=public):
        for url in (
            "/slos/",
            f"/slos/{objective.id}/",
            f"/slos/{objective.id}/report?period=2026-11",
            f"/export/slo-report.csv?slo={objective.id}",
        ):
            answer = client.get(url)
            assert answer.status_code == 302, url
            assert answer["Location"].startswith("/accounts/login/"), url


def test_an_unknown_objective_is_a_404_and_the_csv_names_the_parameter(signed_in):
    missing = ServiceLevelObjectiveFactory().id + 1000
    assert signed_in.get(f"/slos/{missing}/").status_code == 404
    assert signed_in.get(f"/slos/{missing}/report").status_code == 404
    answer = signed_in.get(f"/export/slo-report.csv?slo={missing}")
    assert answer.status_code == 400
    assert answer.json() == {"error": f"unknown slo id {missing}", "param": "slo"}
    assert signed_in.get("/export/slo-report.csv").json()["param"] == "slo"


def test_the_pages_answer_reads_only(signed_in):
    objective = ServiceLevelObjectiveFactory()
    assert signed_in.post(f"/slos/{objective.id}/").status_code == 405
