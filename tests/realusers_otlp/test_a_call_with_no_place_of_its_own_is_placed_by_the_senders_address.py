"""An application that names no place is placed by the address its export came from, looked up offline; the
address is believed from X-Forwarded-For only when a trusted proxy sent it, and is never stored."""

from __future__ import annotations

import pytest

from probes.models import Observation
from tests.realusers_otlp.conftest import wait_for_rows

LAGOS_ADDRESS = "41.58.0.1"


@pytest.mark.asgi_env(LATENCY_TRUSTED_PROXIES="127.0.0.1")
def test_the_address_behind_a_trusted_proxy_places_the_call(site, source, mock_target, instrumented):
    app = instrumented(site, source, headers={"X-Forwarded-For": LAGOS_ADDRESS})
    app.chat(tokens=3)
    [call] = wait_for_rows(Observation, 1)
    assert (call.country, call.city, call.place_from) == ("NG", "Lagos", "address")
    assert call.latitude is not None and round(call.latitude, 1) == call.latitude  # city resolution
    assert call.target_id == mock_target.id
    stored = Observation.objects.filter(pk=call.pk).values().get()
    assert LAGOS_ADDRESS not in repr(stored)


def test_a_forwarded_address_from_an_untrusted_peer_is_not_believed(site, source, mock_target, instrumented):
    app = instrumented(site, source, headers={"X-Forwarded-For": LAGOS_ADDRESS})
    app.chat(tokens=3)
    [call] = wait_for_rows(Observation, 1)
    # The peer is loopback: no public address, no default place for this source.
    assert (call.country, call.city, call.latitude, call.place_from) == ("", "", None, "none")
