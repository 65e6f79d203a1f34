"""Provider error texts are shown only to users allowed to view measurements; everyone else who may read the
dashboard (anyone at all in public mode) sees the outcome only: on the target page, the region page and every
JSON endpoint."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone

from probes.models import Measurement

pytestmark = pytest.mark.django_db

ERROR_TEXT = "HTTP 429: org-7f3k2 quota exhausted for project acme-secret-plan"
ERROR_TYPE = "RateLimitSecretType"
API = ("/api/meta", "/api/overview", "/api/histograms", "/api/timeseries", "/api/phases", "/api/table")


@pytest.fixture
def failing(make_region, make_target, make_probe):
    region = make_region(slug="ev-lagos", name="Lagos", latitude=6.5, longitude=3.4)
    target = make_target(name="Failing API")
    probe = make_probe(target=target, regions=[region])
    now = timezone.now()
    Measurement.objects.bulk_create(
        Measurement(
            probe=probe,
            target=target,
            region=region,
            scheduled_for=now - timedelta(minutes=i + 1),
            started_at=now - timedelta(minutes=i + 1),
            worker="w",
            outcome="http_error" if i % 2 else "ok",
            error=ERROR_TEXT if i % 2 else None,
            error_type=ERROR_TYPE if i % 2 else None,
            http_status=429 if i % 2 else 200,
            connection="cold",
            ttft_ms=None if i % 2 else 300.0,
            total_ms=500.0,
        )
        for i in range(6)
    )
    return {"region": region, "target": target}


def everything(client: Client, failing) -> dict[str, str]:
    """Every dashboard page and JSON endpoint that shows this target's rows, by URL."""
    urls = [f"/targets/{failing['target'].id}/", f"/regions/{failing['region'].slug}/", "/"]
    urls += [f"{path}?target={failing['target'].id}&window=1h" for path in API]
    answers = {}
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        answers[url] = response.content.decode()
    return answers


def user(django_user_model, name: str, *, allowed: bool):
    u = django_user_model.objects.create_user(username=name, password="unused-password-4410")
    if allowed:
        u.user_permissions.add(Permission.objects.get(codename="view_measurement", content_type__app_label="probes"))
    return u


def assert_no_error_text(answers: dict[str, str]) -> None:
    for url, body in answers.items():
        assert "quota exhausted" not in body and "acme-secret-plan" not in body, url
        assert ERROR_TYPE not in body, url


def test_anonymous_visitors_of_a_public_dashboard_see_outcomes_but_no_error_text(settings, failing):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    answers = everything(Client(), failing)
    assert_no_error_text(answers)
    assert answers[f"/targets/{failing['target'].id}/"].count("http_error") == 6  # failures table and recent rows


def test_a_signed_in_user_without_the_measurement_permission_sees_no_error_text(failing, django_user_model):
    client = Client()
    client.force_login(user(django_user_model, "reader", allowed=False))
    answers = everything(client, failing)
    assert_no_error_text(answers)
    assert answers[f"/targets/{failing['target'].id}/"].count("http_error") == 6  # failures table and recent rows
    # The CSV refuses this user too: one rule for both.
    assert client.get("/export/measurements.csv").status_code == 403


def test_a_user_allowed_to_view_measurements_sees_the_error_text(failing, django_user_model):
    client = Client()
    client.force_login(user(django_user_model, "analyst", allowed=True))
    page = client.get(f"/targets/{failing['target'].id}/").content.decode()
    assert page.count(ERROR_TEXT) == 3
    assert ERROR_TYPE in page
