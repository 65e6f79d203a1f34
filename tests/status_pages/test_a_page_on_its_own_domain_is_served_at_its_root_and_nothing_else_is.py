"""A page with a hostname answers at that domain's root: the page, its feed, badges and summary.json, their links
on that domain; nothing else of the site is reached there, and the page still answers at /status/<slug>/ on the
site's own address."""

from __future__ import annotations

import feedparser
import pytest

from probes.models import StatusPage

DOMAIN = "status.acme.test"


@pytest.fixture
def on_domain(scene, settings):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, DOMAIN]
    StatusPage.objects.filter(id=scene.page.id).update(hostname=DOMAIN)
    return scene


def test_the_domains_root_is_the_page(on_domain, client):
    response = client.get("/", HTTP_HOST=DOMAIN)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Acme APIs" in html
    # Relative: /feed.atom here, /status/acme/feed.atom on the site.
    assert 'href="feed.atom"' in html


def test_the_feed_badges_and_summary_answer_at_the_domain_with_its_links(on_domain, client):
    feed = feedparser.parse(client.get("/feed.atom", HTTP_HOST=DOMAIN).content)
    assert not feed.bozo
    assert feed.feed.link == f"http://{DOMAIN}/"

    badge = client.get(f"/badge/{on_domain.target.id}.svg", HTTP_HOST=DOMAIN)
    assert badge.status_code == 200
    assert badge["Content-Type"].startswith("image/svg+xml")

    summary = client.get("/api/v2/summary.json", HTTP_HOST=DOMAIN).json()
    assert summary["page"]["url"] == f"http://{DOMAIN}/"


def test_nothing_else_of_the_site_answers_on_the_domain(on_domain, client, admin_client):
    for path in ("/status/acme/", "/admin/", "/accounts/login/", "/api/v1/", "/slos/", "/metrics", "/incidents/"):
        assert client.get(path, HTTP_HOST=DOMAIN).status_code == 404, path
        assert admin_client.get(path, HTTP_HOST=DOMAIN).status_code == 404, path


def test_the_page_still_answers_on_the_sites_own_address(on_domain, client):
    response = client.get("/status/acme/")
    assert response.status_code == 200
    summary = client.get("/status/acme/api/v2/summary.json").json()
    assert summary["page"]["url"] == "http://testserver/status/acme/"


def test_another_domain_allowed_by_the_site_is_not_the_page(on_domain, client, settings):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "atlas.acme.test"]
    assert client.get("/status/acme/", HTTP_HOST="atlas.acme.test").status_code == 200
    # The site's overview, asking a signed-out reader to sign in.
    response = client.get("/", HTTP_HOST="atlas.acme.test")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_a_domain_the_site_does_not_allow_is_refused_before_any_page(on_domain, client, settings):
    settings.ALLOWED_HOSTS = [h for h in settings.ALLOWED_HOSTS if h != DOMAIN]
    assert client.get("/", HTTP_HOST=DOMAIN).status_code == 400
