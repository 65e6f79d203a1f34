"""Names typed by an admin (regions, cities, targets, models, hosting locations) are text in every figure:
plotly renders a subset of HTML in text, hover text, legend entries and tick labels, so a name holding
`<a href=...>` must reach it escaped, never as markup."""

from __future__ import annotations

import json
import math
import random
from datetime import UTC, datetime

from latency import charts
from latency.charts.distribution import histogram_figure
from latency.charts.over_time import timeseries_figure
from probes.histogram import histogram_of

LINK = '<a href="https://evil.example/phish">click me</a>'
ESCAPED = '&lt;a href="https://evil.example/phish"&gt;click me&lt;/a&gt;'


def region(slug: str, name: str, *, samples: int = 50) -> dict:
    return {
        "id": 1,
        "slug": slug,
        "name": name,
        "city": name,
        "country": LINK,
        "lat": 10.0,
        "lon": 20.0,
        "samples": samples,
        "errors": 0,
        "error_rate": 0.0 if samples else None,
        "p50": 100.0 if samples else None,
        "p95": 200.0 if samples else None,
        "value": 100.0 if samples else None,
        "connect_p50": 20.0 if samples else None,
        "floor_ms": 10.0,
        "tax_ms": 10.0 if samples else None,
    }


def strings(figure) -> list[str]:
    """Every string anywhere in the figure's JSON."""
    found = []

    def walk(value) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(json.loads(json.dumps(charts.figure_json(figure))))
    return found


def assert_text_only(figure) -> None:
    texts = strings(figure)
    assert not [t for t in texts if "<a" in t.lower()], texts
    assert any(ESCAPED in t for t in texts), "the name should still be there, escaped"


def test_the_maps_region_and_target_names_are_escaped():
    target = {"id": 3, "name": LINK, "location_name": LINK, "lat": 39.0, "lon": -77.5}
    fig = charts.world_map([region("r1", LINK), region("r2", LINK, samples=0)], target, "ttft", "p50")
    assert_text_only(fig)
    star = [t for t in fig.data if (t.meta or {}).get("role") == "target"][0]
    assert star.text == (ESCAPED,)
    # Names never sit inside a hovertemplate, where "%{...}" would be a placeholder.
    assert all(LINK not in (t.hovertemplate or "") and ESCAPED not in (t.hovertemplate or "") for t in fig.data)


def test_a_percent_brace_in_a_name_is_not_read_as_a_placeholder():
    target = {"id": 3, "name": "%{lat}", "location_name": "%{lon}", "lat": 39.0, "lon": -77.5}
    fig = charts.world_map([], target, "ttft", "p50")
    star = [t for t in fig.data if (t.meta or {}).get("role") == "target"][0]
    assert "%{lat}" not in star.hovertemplate and "%{lon}" not in star.hovertemplate


def test_time_series_phase_and_histogram_names_are_escaped():
    start = datetime(2026, 3, 1, tzinfo=UTC)
    rows = [
        {"bucket_start": start, "region": "r1", "region_name": LINK, "p50": 1.0, "p95": 2.0, "samples": 1, "mean": None}
    ]
    assert_text_only(timeseries_figure(rows, "ttft"))
    assert_text_only(timeseries_figure(rows, "ttft", lines=True))
    phases = [
        {
            "region": "r1",
            "region_name": LINK,
            "samples": 3,
            "medians": {},
            "segments": dict.fromkeys(("dns", "connect", "tls", "server_wait", "first_token", "streaming"), 1.0),
        }
    ]
    assert_text_only(charts.phases_figure(phases))
    rng = random.Random(3)
    hist = histogram_of(rng.lognormvariate(math.log(300), 0.4) for _ in range(50))
    assert_text_only(histogram_figure({"r1": hist}, "ttft", 0.9, names={"r1": LINK}))
    # A region without a name is shown by its slug, escaped the same way.
    assert_text_only(histogram_figure({LINK: hist}, "ttft"))
