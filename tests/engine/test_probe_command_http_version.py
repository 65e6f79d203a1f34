"""`manage.py probe --http-version 2` measures over HTTP/2 where the server
offers it, and shows the fallback note where it does not."""

import json

from tests.engine.test_probe_command import probe


def test_http_version_2_is_measured_over_http2(mockllm_h2, probe_url):
    url = probe_url(mockllm_h2, "openai", tokens=3)
    out = probe(url, "--model", "m", "--ca-bundle", mockllm_h2.ca_pem_path, "--http-version", "2", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert (data["outcome"], data["http_version"]) == ("ok", "HTTP/2")


def test_the_waterfall_notes_a_fallback_to_http11(mockllm_tls, probe_url):
    url = probe_url(mockllm_tls, "openai", tokens=3)
    out = probe(url, "--model", "m", "--ca-bundle", mockllm_tls.ca_pem_path, "--http-version", "2")
    assert out.returncode == 0, out.stderr
    assert "HTTP/1.1 200" in out.stdout
    assert "note    asked for HTTP/2, measured over HTTP/1.1: the server refused HTTP/2" in out.stdout


def test_http_version_2_only_against_a_refusing_server_exits_one(mockllm_tls, probe_url):
    url = probe_url(mockllm_tls, "openai")
    out = probe(url, "--model", "m", "--ca-bundle", mockllm_tls.ca_pem_path, "--http-version", "2-only", "--json")
    assert out.returncode == 1
    assert json.loads(out.stdout)["outcome"] == "protocol_error"


def test_an_unknown_http_version_is_refused_by_the_parser(mockllm, probe_url):
    out = probe(probe_url(mockllm, "openai"), "--model", "m", "--http-version", "3")
    assert out.returncode == 2 and "--http-version" in out.stderr
