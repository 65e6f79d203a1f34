"""The slow_* knobs: the mock server answers late to the requests that say they come from one region (the header
probes send under emulated geography), only inside the window the knobs give; the demo's live incident is made of
them."""

from __future__ import annotations

import time
import uuid

import httpx
import pytest

from probes.geo import EMULATED_REGION_HEADER

OPENAI = "/v1/chat/completions"
BODY = {"model": "gpt-mock", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def client(mockllm):
    with httpx.Client(base_url=mockllm.base_url, timeout=10) as client:
        yield client


def first_token_delay(client, region: str | None, slow_from: float, slow_until: float) -> float:
    request_id = uuid.uuid4().hex
    headers = {"x-mock-request-id": request_id}
    if region is not None:
        headers[EMULATED_REGION_HEADER] = region
    query = f"tokens=2&slow_region=eu-frankfurt&slow_ms=250&slow_from={slow_from:.0f}&slow_until={slow_until:.0f}"
    response = client.post(f"{OPENAI}?{query}", json=BODY, headers=headers)
    assert response.status_code == 200
    return client.get(f"/_mock/log/{request_id}").json()["first_token_delay_ms"]


def test_only_the_named_region_is_slowed_inside_the_window(client):
    now = time.time()
    assert first_token_delay(client, "eu-frankfurt", now - 60, now + 600) == 250
    assert first_token_delay(client, "eu-london", now - 60, now + 600) == 0
    assert first_token_delay(client, None, now - 60, now + 600) == 0


def test_before_and_after_the_window_the_region_is_served_as_usual(client):
    now = time.time()
    assert first_token_delay(client, "eu-frankfurt", now + 600, now + 1200) == 0
    assert first_token_delay(client, "eu-frankfurt", now - 1200, now - 600) == 0


def test_a_region_knob_that_is_no_slug_is_refused(client):
    response = client.post(f"{OPENAI}?slow_region=Frankfurt%20am%20Main", json=BODY)
    assert response.status_code == 400
    assert "slow_region" in response.text
