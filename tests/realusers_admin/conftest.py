"""Ingest sources in the admin: the add form's data, and the token as the one-time page shows it."""

from __future__ import annotations

import re

import pytest

from probes.realusers import matching


@pytest.fixture(autouse=True)
def _fresh_targets():
    matching.forget()
    yield
    matching.forget()


def source_data(**overrides) -> dict:
    data = {
        "name": "Shop assistant",
        "allowed_origins": "https://shop.example.com\nhttp://127.0.0.1:8000",
        "enabled": "on",
        "default_country": "",
        "default_city": "",
        "default_latitude": "",
        "default_longitude": "",
    }
    data.update(overrides)
    return data


def shown_token(response) -> str:
    """The token in the one-time page (<pre id="ingest-token">)."""
    match = re.search(r'<pre id="ingest-token"[^>]*>(lat_[A-Za-z0-9_-]+)</pre>', response.content.decode())
    assert match, "the page shows no token"
    return match.group(1)
