"""A page's hostname is a domain name the site allows (ALLOWED_HOSTS), on a public page, not the site's own
address, and one page's alone: anything else is refused with the reason, in the admin as anywhere the model is
validated, and nothing is saved."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from probes.models import StatusPage
from tests.factories import StatusPageFactory


@pytest.fixture
def allowed(settings):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, ".acme.test"]


def errors(page) -> list[str]:
    with pytest.raises(ValidationError) as raised:
        page.full_clean()
    return raised.value.message_dict["hostname"]


@pytest.mark.parametrize("name", ["localhost", "10.0.0.7", "status.acme.test:8443", "-bad.acme.test", "a b.test"])
def test_what_is_not_a_domain_name_is_refused(db, allowed, name):
    assert "Enter a domain name" in errors(StatusPageFactory.build(hostname=name))[0]


def test_a_domain_the_site_does_not_allow_is_refused_naming_the_setting(db, allowed):
    assert "ALLOWED_HOSTS" in errors(StatusPageFactory.build(hostname="status.elsewhere.test"))[0]


def test_a_page_not_public_cannot_have_a_domain(db, allowed):
    assert "public" in errors(StatusPageFactory.build(hostname="status.acme.test", public=False))[0]


def test_the_sites_own_address_is_refused(db, allowed, settings):
    settings.LATENCY_SITE_URL = "https://atlas.acme.test"
    assert "site's own address" in errors(StatusPageFactory.build(hostname="atlas.acme.test"))[0]


def test_a_domain_is_written_in_lower_case_without_its_final_dot(db, allowed):
    page = StatusPageFactory.build(hostname=" Status.ACME.test. ")
    page.full_clean()
    assert page.hostname == "status.acme.test"


def test_two_pages_cannot_share_a_domain(db, allowed):
    StatusPageFactory(hostname="status.acme.test")
    with pytest.raises(ValidationError) as raised:
        StatusPageFactory.build(hostname="status.acme.test").full_clean()
    assert "hostname" in str(raised.value) or "__all__" in raised.value.message_dict


def test_the_admin_shows_the_reason_and_saves_nothing(db, allowed, admin_client):
    response = admin_client.post(
        "/admin/probes/statuspage/add/",
        {"title": "Acme", "slug": "acme", "language": "en", "public": "on", "hostname": "status.other.test"},
    )
    assert response.status_code == 200
    assert "ALLOWED_HOSTS" in response.content.decode()
    assert not StatusPage.objects.exists()
