"""/metrics answers Prometheus' bearer token (LATENCY_METRICS_TOKEN) or a signed-in session, over real HTTP; anyone
else gets a 401 with a challenge, public dashboard or not, and without the setting there is no token path."""

from __future__ import annotations

import httpx
import pytest
from django.test import override_settings

from tests.metrics.conftest import TOKEN, families


def test_a_scrape_without_a_token_is_refused_with_a_challenge(site):
    response = httpx.get(f"{site.origin}/metrics")
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer ")
    assert "latency_atlas" not in response.text


def test_a_wrong_token_is_refused(site):
    for header in (f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", f"Basic {TOKEN}", "Bearer", f"Bearer  x{TOKEN}", TOKEN):
        response = httpx.get(f"{site.origin}/metrics", headers={"Authorization": header})
        assert response.status_code == 401, header


def test_the_token_opens_it(site):
    response = httpx.get(f"{site.origin}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    assert "latency_atlas_region_info" in families(response.text)


def test_a_signed_in_session_opens_it(site, django_user_model):
    django_user_model.objects.create_user("viewer", password="a-long-password-for-tests")
    with httpx.Client(base_url=site.origin) as client:
        login = client.get("/accounts/login/")
        answer = client.post(
            "/accounts/login/",
            data={
                "username": "viewer",
                "password": "a-long-password-for-tests",
                "csrfmiddlewaretoken": login.cookies["csrftoken"],
            },
        )
        assert answer.status_code == 302
        response = client.get("/metrics")
    assert response.status_code == 200
    assert "latency_atlas_region_info" in families(response.text)


@pytest.mark.django_db
def test_without_the_setting_no_token_opens_it(scrape_client, settings):
    settings.LATENCY_METRICS_TOKEN_SHA256 = ""
    assert scrape_client(token=TOKEN).status_code == 401
    assert scrape_client(token="").status_code == 401


@pytest.mark.django_db
@override_settings(LATENCY_PUBLIC_DASHBOARD=True)
def test_a_public_dashboard_does_not_make_it_public(scrape_client, metrics_token):
    assert scrape_client().status_code == 401
    assert scrape_client(token=metrics_token).status_code == 200
