"""The domains are read at most once a period per process, but the admin's change is served by its own process
on the next request: the page at its new domain, nothing at its old one."""

from __future__ import annotations

import pytest

from probes.models import StatusPage


@pytest.fixture
def cached_domains(scene, settings):
    settings.LATENCY_STATUS_CACHE_S = 3600
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, ".acme.test"]
    StatusPage.objects.filter(id=scene.page.id).update(hostname="old.acme.test")
    return scene


def test_the_new_domain_serves_the_page_and_the_old_no_longer_does(
    cached_domains, client, admin_client, django_capture_on_commit_callbacks
):
    from probes.statuspages.hosts import forget_domains

    forget_domains()  # another test's table
    assert client.get("/", HTTP_HOST="old.acme.test").status_code == 200
    page = cached_domains.page
    form = {
        "title": page.title,
        "slug": page.slug,
        "description": "",
        "language": "en",
        "public": "on",
        "show_latency": "on",
        "hostname": "new.acme.test",
        "targets": [cached_domains.target.id],
        "slos": [cached_domains.objective.id],
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(f"/admin/probes/statuspage/{page.id}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert client.get("/", HTTP_HOST="new.acme.test").status_code == 200
    assert client.get("/", HTTP_HOST="old.acme.test").status_code == 302  # the site's overview: sign in
