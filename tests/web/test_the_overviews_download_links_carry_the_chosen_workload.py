"""The overview's "Download CSV" links carry the chosen workload as they carry its targets, regions and window, so a
download holds the calls the page shows; with every workload chosen they carry none."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest

pytestmark = pytest.mark.django_db


def links(page: str) -> dict[str, tuple[str, dict[str, list[str]]]]:
    """Each download link's (path, query) by its id."""
    out = {}
    for link_id, href in re.findall(r'<a id="(download-\w+)" data-export="[^"]*" href="([^"]*)"', page):
        parts = urlsplit(html.unescape(href))
        out[link_id] = (parts.path, parse_qs(parts.query))
    return out


@pytest.fixture
def probed(make_region, make_target, make_probe):
    """The overview shows its filters (and the links) once something is probed."""
    make_probe(target=make_target(name="Alpha"), regions=[make_region(slug="wl-oslo")], workload="prompt_100k")


@pytest.mark.parametrize("workload", ["prompt_100k", "short"])
def test_each_link_carries_the_workload(client, viewer, probed, workload):
    response = client.get("/", {"window": "24h", "region": "wl-oslo", "workload": workload})
    assert response.status_code == 200
    found = links(response.content.decode())
    assert set(found) == {"download-measurements", "download-regions"}
    assert {path for path, _ in found.values()} == {"/export/measurements.csv", "/export/regions.csv"}
    for _, query in found.values():
        assert query == {"region": ["wl-oslo"], "since": ["24h"], "workload": [workload]}


def test_every_workload_carries_none(client, viewer, probed):
    response = client.get("/", {"window": "24h", "workload": ""})
    assert response.status_code == 200
    assert len(links(response.content.decode())) == 2
    for _, query in links(response.content.decode()).values():
        assert query == {"since": ["24h"]}
