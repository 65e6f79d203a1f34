"""The admin refuses, on save, a target whose request could never be sent: a
host name DNS cannot encode, a header HTTP cannot carry or the client must
set itself. It says what to fix, never echoing a value. The CA file is not
checked here: it lives on the workers, which report it themselves."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from probes.models import Target
from tests.admin.test_admin_validation import form_errors, target_data

ADD = "admin:probes_target_add"


@pytest.mark.parametrize(
    "host, words",
    [
        ("a..b", "empty label"),
        ("a" * 64 + ".example.com", "longer than 63"),
        ("xn--zz-.example.com", "letters, digits"),
        ("xn--zz.example.com", "punycode"),
        ("ex\u00adample.com", "IDNA"),
        ("api_\u2603.example.com", "IDNA"),
    ],
    ids=["empty-label", "long-label", "broken-a-label", "bad-punycode", "soft-hyphen", "symbol"],
)
def test_a_host_dns_cannot_encode_is_refused(admin_client, host, words):
    response = admin_client.post(reverse(ADD), target_data(url=f"https://{host}/v1/chat/completions"))
    [message] = form_errors(response)["url"]
    assert message.startswith("URL ") and "host name" in message and words in message
    assert not Target.objects.exists()


@pytest.mark.parametrize(
    "host",
    [
        "api.openai.com",
        "bücher.example",
        "vllm_gateway.internal",
        "r3---sn-abc.googlevideo.com",
        "127.0.0.1",
        "[::1]",
        "localhost.",
    ],
)
def test_valid_host_names_save(admin_client, host):
    response = admin_client.post(reverse(ADD), target_data(url=f"https://{host}/v1/chat/completions"))
    assert response.status_code == 302, form_errors(response)
    assert Target.objects.count() == 1


@pytest.mark.parametrize("name", ["Content-Length", "host", "Transfer-Encoding", "Connection"])
def test_a_header_the_http_client_sets_is_refused(admin_client, name):
    response = admin_client.post(reverse(ADD), target_data(headers=json.dumps({name: "5"})))
    [message] = form_errors(response)["headers"]
    assert name in message and "set by the HTTP client" in message
    assert not Target.objects.exists()


@pytest.mark.parametrize(
    "value, words",
    [
        ("Caf\u00e9 prod", "non-ASCII character (U+00E9)"),
        ("\u201cquoted\u201d", "non-ASCII character (U+201C)"),
        ("ring\u0007bell", "control character (U+0007)"),
        ("Bearer ${TOKEN}\u201d", "non-ASCII character (U+201D)"),
    ],
    ids=["accent", "typographic-quote", "bell", "quote-after-reference"],
)
def test_a_header_value_http_cannot_carry_is_refused(admin_client, value, words):
    name = "Authorization" if "${" in value else "X-Title"
    response = admin_client.post(reverse(ADD), target_data(headers=json.dumps({name: value})))
    [message] = form_errors(response)["headers"]
    assert name in message and words in message and "ASCII" in message
    assert value not in message
    assert not Target.objects.exists()


def test_a_ca_bundle_missing_here_still_saves_because_it_lives_on_the_workers(admin_client):
    response = admin_client.post(reverse(ADD), target_data(ca_bundle="not-on-this-host.pem"))
    assert response.status_code == 302, form_errors(response)
    assert Target.objects.get().ca_bundle == "not-on-this-host.pem"
