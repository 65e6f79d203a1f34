"""A target chooses its HTTP version in the admin; probes carry it to the
engine; HTTP/2 only over a plain http:// URL is refused on save."""

import pytest
from django.urls import reverse

from probes.models import Target
from tests.admin.test_admin_validation import form_errors, target_data
from tests.factories import ProbeFactory, TargetFactory

ADD = "admin:probes_target_add"


@pytest.mark.django_db
def test_a_probe_passes_its_targets_http_version_to_the_engine():
    probe = ProbeFactory(target=TargetFactory(url="https://api.example.com/v1/chat/completions", http_version="2"))
    assert probe.spec().http_version == "2"


@pytest.mark.django_db
def test_targets_default_to_http11():
    assert TargetFactory().http_version == "1.1"
    assert ProbeFactory().spec().http_version == "1.1"


def test_the_admin_stores_http2_for_an_https_target(admin_client):
    response = admin_client.post(reverse(ADD), target_data(http_version="2-only"))
    assert response.status_code == 302, form_errors(response)
    assert Target.objects.get().http_version == "2-only"


def test_http2_only_over_plain_http_is_refused_on_save(admin_client):
    data = target_data(url="http://api.example.com/v1/chat/completions", http_version="2-only")
    [message] = form_errors(admin_client.post(reverse(ADD), data))["http_version"]
    assert "https://" in message
    assert not Target.objects.exists()
