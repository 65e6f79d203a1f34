"""The distribution and time-series charts stay readable at 15 regions: a
named row per region (never a slug, never a colour to match against a
legend), sorted, on axes whose labels do not bunch up; lines only where
each region can have a colour of its own."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import pytest

from latency.charts.distribution import PERCENTILE_MARKER_COLOR, histogram_figure, log_ticks
from latency.charts.over_time import MAX_LINES, OKABE_ITO, timeseries_figure, wants_lines
from probes.histogram import histogram_of

CITIES = [
    "Lagos", "London", "Tokyo", "Sydney", "São Paulo", "Mumbai", "Frankfurt", "Virginia",
    "Singapore", "Johannesburg", "Seoul", "Toronto", "Paris", "Stockholm", "Santiago",
]  # fmt: skip
START = datetime(2026, 3, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)


def slug(city: str) -> str:
    return "xx-" + city.lower().replace(" ", "").replace("ã", "a")


@pytest.fixture
def fifteen():
    """Region slug -> histogram, with medians from 100 ms (Lagos) upwards, shuffled."""
    rng = random.Random(15)
    hists = {}
    for i, city in enumerate(CITIES):
        median = 100.0 * 1.25**i
        hists[slug(city)] = histogram_of(rng.lognormvariate(math.log(median), 0.3) for _ in range(300))
    order = list(hists)
    rng.shuffle(order)
    return {s: hists[s] for s in order}, {slug(c): c for c in CITIES}


def box(fig):
    return next(t for t in fig.data if t.meta["role"] == "box")


def marker(fig):
    return next(t for t in fig.data if t.meta["role"] == "percentile")


def test_the_distribution_has_a_row_per_region_named_and_sorted_by_median_fastest_first(fifteen):
    hists, names = fifteen
    fig = histogram_figure(hists, "ttft", 0.9, names=names)
    rows = box(fig)
    assert rows.type == "box" and rows.orientation == "h"
    assert list(rows.y) == CITIES  # built fastest first
    medians = list(rows.median)
    assert medians == sorted(medians)
    assert fig.layout.yaxis.autorange == "reversed"  # the first row at the top
    for name, median, q1, q3, low, high in zip(
        rows.y, rows.median, rows.q1, rows.q3, rows.lowerfence, rows.upperfence, strict=True
    ):
        hist = hists[slug(name)]
        assert (low, q1, median, q3, high) == tuple(hist.percentile(q) for q in (0.05, 0.25, 0.5, 0.75, 0.95))
    assert "fastest at the top" in fig.layout.xaxis.title.text


def test_the_selected_percentile_is_a_marker_of_its_own_named_in_the_legend(fifteen):
    hists, names = fifteen
    fig = histogram_figure(hists, "ttft", "p99", names=names)
    mark = marker(fig)
    assert mark.name == "p99 (selected percentile)" and mark.showlegend is not False
    assert list(mark.y) == list(box(fig).y)
    assert list(mark.x) == [hists[slug(name)].percentile(0.99) for name in mark.y]
    assert mark.marker.color == PERCENTILE_MARKER_COLOR != box(fig).marker.color
    assert "<b>p99: " in mark.text[0] and "samples: 300" in mark.text[0]


def test_every_row_has_the_same_colour_so_none_is_told_apart_by_colour(fifteen):
    hists, names = fifteen
    fig = histogram_figure(hists, "ttft", 0.5, names=names)
    assert len([t for t in fig.data if t.type == "box"]) == 1  # one trace, one colour, fifteen rows
    assert len(box(fig).y) == 15


def test_tokens_per_second_puts_the_highest_first_and_says_higher_is_better(fifteen):
    hists, names = fifteen
    fig = histogram_figure(hists, "tokens_per_s", 0.5, names=names)
    assert list(box(fig).y) == CITIES[::-1]
    assert "higher is better" in fig.layout.xaxis.title.text
    assert all(text.endswith(" tok/s") for text in fig.layout.xaxis.ticktext)


def test_the_log_axis_has_few_round_ticks_with_units(fifteen):
    hists, names = fifteen
    fig = histogram_figure(hists, "ttft", 0.5, names=names)
    axis = fig.layout.xaxis
    assert axis.type == "log"
    assert 2 <= len(axis.tickvals) <= 7
    for value in axis.tickvals:
        mantissa = value / 10 ** math.floor(math.log10(value) + 1e-9)
        assert round(mantissa, 6) in (1, 2, 5)
    assert "1 s" in axis.ticktext and all(t.endswith((" ms", " s")) for t in axis.ticktext)
    low, high = axis.range
    assert 10**low <= min(box(fig).lowerfence) and 10**high >= max(box(fig).upperfence)


@pytest.mark.parametrize(
    ("low", "high"), [(310.0, 390.0), (0.5, 30_000.0), (1.0, 3_600_000.0), (150.0, 150.0), (20.0, 90.0)]
)
def test_log_ticks_span_the_values_with_at_least_two_and_at_most_seven_labels(low, high):
    ticks, (start, end) = log_ticks(low, high)
    assert 2 <= len(ticks) <= 7
    assert 10**start <= low and 10**end >= high
    assert ticks == sorted(set(ticks))


def test_the_distribution_grows_with_its_rows(fifteen):
    hists, names = fifteen
    three = dict(list(hists.items())[:3])
    tall, short = histogram_figure(hists, "ttft", names=names), histogram_figure(three, "ttft", names=names)
    assert tall.layout.height >= 15 * 25 and tall.layout.height > short.layout.height


def test_regions_sharing_a_name_keep_a_row_each():
    hists = {"eu-fra-1": histogram_of([100.0, 110.0]), "eu-fra-2": histogram_of([300.0, 320.0])}
    fig = histogram_figure(hists, "ttft", names=dict.fromkeys(hists, "Frankfurt"))
    assert list(box(fig).y) == ["Frankfurt (eu-fra-1)", "Frankfurt (eu-fra-2)"]


def test_an_empty_distribution_says_there_is_nothing_to_show():
    fig = histogram_figure({}, "ttft", 0.5)
    assert not fig.data and "No values" in fig.layout.annotations[0].text


# Over time ----------------------------------------------------------------------------


def series(cities, *, hours=6, skip=(), extra=None):
    """Series rows with `value` and `at` (the reader's current keys), one per region and hour."""
    rows = []
    for i, city in enumerate(cities):
        for k in range(hours):
            if (city, k) in skip:
                continue
            start = START + k * HOUR
            rows.append(
                {
                    "bucket_start": start,
                    "at": start + timedelta(minutes=20 + i),
                    "region": slug(city),
                    "region_name": city,
                    "p50": 100.0 + i,
                    "p95": 300.0 + i,
                    "value": 200.0 + 10 * i + k,
                    "samples": 12,
                    "mean": None,
                    **(extra or {}),
                }
            )
    return rows


def test_the_heatmap_has_a_row_per_region_name_in_order_and_empty_cells_for_gaps():
    rows = series(CITIES, skip={("Tokyo", 2)})
    fig = timeseries_figure(rows, "ttft", "p90", step=HOUR)
    (heat,) = fig.data
    assert heat.type == "heatmap"
    assert list(heat.y) == sorted(CITIES)
    assert fig.layout.yaxis.autorange == "reversed"
    assert len(heat.x) == 6 + 1  # cell edges: the cells cover their hours, not centred on their starts
    assert heat.x[0] == "2026-03-01T00:00:00.000" and heat.x[-1] == "2026-03-01T06:00:00.000"
    tokyo = list(heat.y).index("Tokyo")
    assert heat.z[tokyo][2] is None and heat.z[tokyo][3] == 200.0 + 10 * CITIES.index("Tokyo") + 3
    assert heat.hoverongaps is False
    assert fig.layout.height >= 15 * 20


def test_the_heatmap_colour_scale_is_the_maps_colour_blind_safe_one_and_titled_with_percentile_metric_and_unit():
    fig = timeseries_figure(series(CITIES[:3]), "ttft", 0.9, step=HOUR)
    heat = fig.data[0]
    scale = [color for _, color in heat.colorscale]
    # Cividis, lighter is better as on the map: short times light, long ones dark.
    assert scale[0].lower() == "#fee838" and scale[-1].lower() == "#00224e"
    tps = timeseries_figure(series(CITIES[:3]), "tokens_per_s", 0.9, step=HOUR).data[0]
    assert [color for _, color in tps.colorscale][-1].lower() == "#fee838"
    assert heat.colorbar.title.text == "p90 TTFT (ms)"
    assert "%{y}" in heat.hovertemplate and "samples: %{customdata[2]}" in heat.hovertemplate
    lagos = list(heat.y).index("Lagos")
    time, value, samples = heat.customdata[lagos][0]
    assert time == "2026-03-01 00:00–01:00 UTC" and value == "200 ms" and samples == 12


def test_a_bucket_missing_everywhere_is_an_empty_column_and_the_ends_stop_at_the_window():
    rows = [r for r in series(CITIES[:2]) if r["bucket_start"] != START + 3 * HOUR]
    window = (START + timedelta(minutes=15), START + timedelta(hours=5, minutes=40))
    heat = timeseries_figure(rows, "ttft", 0.5, step=HOUR, window=window).data[0]
    assert len(heat.x) == 7 and all(row[3] is None for row in heat.z)
    assert heat.x[0] == "2026-03-01T00:15:00.000" and heat.x[-1] == "2026-03-01T05:40:00.000"


def test_rows_without_a_value_key_fall_back_to_their_own_percentile_column_only():
    rows = [{k: v for k, v in row.items() if k not in ("value", "at")} for row in series(CITIES[:2])]
    p50 = timeseries_figure(rows, "ttft", 0.5, step=HOUR).data[0]
    assert p50.z[0][0] == 100.0
    p90 = timeseries_figure(rows, "ttft", 0.9, step=HOUR)
    assert not p90.data and p90.layout.annotations[0].text == "No p90 values of this metric in this window."


def test_lines_give_every_region_a_colour_of_its_own_with_its_name_in_the_legend():
    cities = CITIES[:MAX_LINES]
    fig = timeseries_figure(series(cities), "ttft", 0.9, lines=True, step=HOUR)
    assert [t.name for t in fig.data] == sorted(cities)
    colors = [t.line.color for t in fig.data]
    assert len(set(colors)) == len(colors) == MAX_LINES and set(colors) <= set(OKABE_ITO)
    # Points sit where the data is (`at`), not at the bucket starts.
    lagos = next(t for t in fig.data if t.name == "Lagos")
    assert lagos.x[0] == "2026-03-01T00:20:00.000"
    assert lagos.y[0] == 200.0
    assert fig.layout.yaxis.title.text == "p90 TTFT (ms)"


def test_lines_break_at_a_missing_bucket():
    fig = timeseries_figure(series(["Lagos"], skip={("Lagos", 3)}), "ttft", 0.5, lines=True, step=HOUR)
    assert list(fig.data[0].y).count(None) == 1


def test_lines_for_more_regions_than_colours_draw_the_heatmap_and_say_why():
    fig = timeseries_figure(series(CITIES), "ttft", 0.5, lines=True, step=HOUR)
    assert [t.type for t in fig.data] == ["heatmap"]
    assert "at most 8 regions" in fig.layout.annotations[0].text


@pytest.mark.parametrize(
    ("choice", "chosen", "lines"),
    [(None, 0, False), (None, 3, True), (None, 8, True), (None, 9, False), ("heatmap", 2, False), ("lines", 0, True)],
)
def test_lines_are_the_default_only_for_up_to_eight_chosen_regions(choice, chosen, lines):
    assert wants_lines(choice, chosen) is lines
