"""An orchestrator probes a container by its address, over plain HTTP, without a session: /healthz and /readyz
answer it where every other path of the site refuses that Host or redirects to HTTPS."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

POD = "10.42.0.17:8000"


@pytest.fixture
def production_like(settings):
    settings.ALLOWED_HOSTS = ["atlas.example.org"]
    settings.SECURE_SSL_REDIRECT = True


def test_healthz_answers_live_where_the_login_page_refuses_the_host(client, production_like):
    assert client.get("/accounts/login/", HTTP_HOST=POD).status_code == 400
    response = client.get("/healthz", HTTP_HOST=POD)
    assert response.status_code == 200
    assert response.json() == {"status": "live"}
    assert response["Cache-Control"] == "no-store"
    assert "sessionid" not in response.cookies


def test_readyz_answers_without_a_redirect_to_https(client, production_like):
    assert client.get("/accounts/login/", HTTP_HOST="atlas.example.org").status_code == 301
    response = client.get("/readyz", HTTP_HOST="atlas.example.org")
    assert response.status_code == 200
    assert response.json()["status"] == "ready"


def test_a_head_request_is_answered_and_a_post_goes_on_to_the_site(client):
    assert client.head("/healthz").status_code == 200
    # Not ours to answer: the site has no such page.
    assert client.post("/healthz").status_code == 404
