"""A status page's hostname over the API is judged by the model's own rules, the admin's: a domain name, listed
in ALLOWED_HOSTS, not the site's own address, one page per domain. Each refusal is a 400 naming hostname, and
nothing is saved; a hostname the site answers is stored as the rules normalise it."""

from __future__ import annotations

import pytest

from probes.models import StatusPage
from tests.api.conftest import bearer
from tests.factories import StatusPageFactory

pytestmark = pytest.mark.django_db
LIST = "/api/v1/status-pages/"
HOST = "status.example.org"


@pytest.fixture(autouse=True)
def hosts(settings):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, HOST, "atlas.example.org"]
    settings.LATENCY_SITE_URL = "https://atlas.example.org"


def post(client, role, body: dict):
    return client.post(LIST, body, content_type="application/json", **bearer(role.token))


@pytest.mark.parametrize(
    ("hostname", "message"),
    [
        ("status.elsewhere.example", "status.elsewhere.example is not in ALLOWED_HOSTS"),
        ("atlas.example.org", "This is the site's own address (LATENCY_SITE_URL)."),
        ("status.example.org:8443", "Enter a domain name such as status.example.com"),
        ("localhost", "Enter a domain name such as status.example.com"),
    ],
)
def test_a_hostname_the_admin_would_refuse_is_a_400_naming_it_and_nothing_is_saved(client, roles, hostname, message):
    response = post(client, roles.editor, {"slug": "acme", "title": "Acme", "public": True, "hostname": hostname})

    assert response.status_code == 400, response.content
    assert list(response.json()) == ["hostname"], response.json()
    assert message in response.json()["hostname"][0]
    assert not StatusPage.objects.exists()


def test_a_hostname_in_allowed_hosts_is_stored_and_a_change_to_another_is_refused(client, roles):
    created = post(client, roles.editor, {"slug": "acme", "title": "Acme", "public": True, "hostname": HOST})
    assert created.status_code == 201, created.content
    assert created.json()["hostname"] == HOST

    url = f"{LIST}{created.json()['id']}/"
    patched = client.patch(
        url, {"hostname": "status.elsewhere.example"}, content_type="application/json", **bearer(roles.editor.token)
    )

    assert patched.status_code == 400 and list(patched.json()) == ["hostname"], patched.content
    assert StatusPage.objects.get(slug="acme").hostname == HOST


def test_a_second_page_on_the_same_domain_is_refused(client, roles):
    StatusPageFactory(slug="first", hostname=HOST)

    response = post(client, roles.editor, {"slug": "second", "title": "Second", "public": True, "hostname": HOST})

    assert response.status_code == 400, response.content
    assert not StatusPage.objects.filter(slug="second").exists()
