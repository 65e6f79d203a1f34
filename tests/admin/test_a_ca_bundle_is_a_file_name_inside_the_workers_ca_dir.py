"""A target's CA bundle is the name of a file inside each worker's LATENCY_CA_DIR: an absolute path or one that
goes up (..) would let whoever edits a target point the workers at any file. The model and the admin refuse
them, naming the setting; a name (or a name in a subdirectory) saves, since only the workers can look for it."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from probes.models import Target
from tests.admin.test_admin_validation import form_errors, target_data

ADD = "admin:probes_target_add"
REFUSED = ["/etc/ssl/private/server.key", "/etc/latency/ca.pem", "../../etc/passwd", "corp/../../x.pem", "a\\b.pem"]


@pytest.mark.parametrize("value", REFUSED)
def test_a_path_outside_the_directory_is_refused_naming_the_setting(admin_client, value):
    with pytest.raises(ValidationError) as info:
        Target(name="t", api_style="http", url="https://example.com/", ca_bundle=value).full_clean()
    assert "LATENCY_CA_DIR" in info.value.message_dict["ca_bundle"][0]

    response = admin_client.post(reverse(ADD), target_data(ca_bundle=value))
    [message] = form_errors(response)["ca_bundle"]
    assert "LATENCY_CA_DIR" in message and value not in message
    assert not Target.objects.exists()


@pytest.mark.parametrize("value", ["corporate-ca.pem", "proxies/zscaler.pem"])
def test_a_name_inside_the_directory_saves(admin_client, value):
    response = admin_client.post(reverse(ADD), target_data(ca_bundle=value))
    assert response.status_code == 302, form_errors(response)
    assert Target.objects.get().ca_bundle == value
