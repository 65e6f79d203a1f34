"""The workload selector (a plain GET form's <select>) on the region ranking, the model group, the traffic mix and
the overview: the chosen workload ranks its own calls, is shown selected and named on the page, travels in the
page's links, and an unknown one is a 400 naming `workload`, on the pages and the JSON endpoints behind them."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories import ModelGroupFactory, spread_measurements

pytestmark = pytest.mark.django_db

# TTFT (ms) of each target's probes: Alpha is the faster with a short prompt, Beta with 100k tokens.
TTFT = {"Alpha": {"short": 100.0, "prompt_100k": 4000.0}, "Beta": {"short": 400.0, "prompt_100k": 1500.0}}
ORDER = {"short": ["Alpha", "Beta"], "prompt_100k": ["Beta", "Alpha"]}


@pytest.fixture
def world(make_region, make_target, make_probe):
    region = make_region(slug="wl-lagos", name="Lagos")
    now = timezone.now()
    targets = {}
    for seed, (name, figures) in enumerate(TTFT.items()):
        target = targets[name] = make_target(name=name)
        for workload, ttft in figures.items():
            probe = make_probe(target=target, regions=[region], workload=workload)
            start, end = now - timedelta(minutes=50), now - timedelta(minutes=1)
            spread_measurements(probe, region, start, end, 12, seed=seed, ttft_ms=ttft, workload=workload)
    group = ModelGroupFactory(name="one model", targets=list(targets.values()))
    return {"region": region, "targets": targets, "group": group}


def pages(world) -> dict[str, tuple[str, dict, str]]:
    """Each page: (url, its other parameters, the id of the table it ranks the targets in)."""
    slug = world["region"].slug
    return {
        "region": (f"/regions/{slug}/", {}, "region-ranking"),
        "model group": (f"/models/{world['group'].id}/", {}, "leaderboard"),
        "mix": ("/where/", {f"share-{slug}": "1"}, "mix-ranking"),
    }


def ranked(html: str, table_id: str) -> list[str]:
    """The target names in a ranking table, top to bottom."""
    table = html[html.index(f'id="{table_id}"') :]
    table = table[: table.index("</table>")]
    return re.findall(r'href="/targets/\d+/">(Alpha|Beta)</a>', table)


@pytest.mark.parametrize("page", ["region", "model group", "mix"])
@pytest.mark.parametrize("workload", ["short", "prompt_100k"])
def test_each_page_ranks_the_chosen_workloads_calls_and_says_which(client, viewer, world, page, workload):
    url, params, table = pages(world)[page]
    response = client.get(url, {**params, "window": "1h", "workload": workload})

    assert response.status_code == 200
    html = response.content.decode()
    assert ranked(html, table) == ORDER[workload]
    assert f'<option value="{workload}" selected>' in html
    shown = {"short": "short prompt", "prompt_100k": "prompt of about 100k tokens"}[workload]
    assert f'<strong id="workload-name">{shown}</strong>' in html


@pytest.mark.parametrize("page", ["region", "model group", "mix"])
def test_without_a_workload_every_call_counts_and_the_page_says_they_are_mixed(client, viewer, world, page):
    url, params, _table = pages(world)[page]
    html = client.get(url, {**params, "window": "1h"}).content.decode()

    assert '<option value="" selected>All workloads</option>' in html
    assert '<span id="workload-mixed">' in html


def test_the_region_pages_links_keep_the_workload(client, viewer, world):
    html = client.get(f"/regions/{world['region'].slug}/", {"workload": "prompt_100k"}).content.decode()

    assert '?region=wl-lagos&amp;workload=prompt_100k"' in html
    assert "?share-wl-lagos=100&amp;workload=prompt_100k" in html


def test_the_overview_offers_the_workload_and_its_table_reads_it(client, viewer, world):
    html = client.get("/", {"workload": "prompt_100k"}).content.decode()
    assert '<option value="prompt_100k" selected>' in html

    for workload in ("short", "prompt_100k"):
        rows = client.get("/api/table", {"window": "1h", "workload": workload}).json()["rows"]
        assert {row["target"]: row["p50"] for row in rows} == {name: TTFT[name][workload] for name in TTFT}
    mixed = client.get("/api/table", {"window": "1h"}).json()["rows"]
    assert {row["target"]: row["samples"] for row in mixed} == {"Alpha": 24, "Beta": 24}


@pytest.mark.parametrize(
    "where",
    ["/regions/wl-lagos/", "/models/{group}/", "/where/?share-wl-lagos=1", "/", "/api/table", "/api/timeseries"],
)
def test_an_unknown_workload_is_a_400_naming_it(client, viewer, world, where):
    url = where.format(group=world["group"].id)
    response = client.get(url + ("&" if "?" in url else "?") + "workload=prompt_1m")

    assert response.status_code == 400
    message = "workload must be one of short, prompt_1k, prompt_10k, prompt_100k, cached_pair"
    if url.startswith("/api/"):
        assert response.json() == {"error": message, "param": "workload"}
    else:
        html = response.content.decode()
        assert message in html and "<code>workload</code>" in html
