"""A target probed with a short prompt (fast) and with a prompt of 100k tokens (slow): read with workload=prompt_100k
every figure the ranking, model group, mix and overview pages show is the slow probe's, with workload=short the
fast one's (rows stored before workloads existed, NULL, counted as short), and with no workload both mixed, as
before. Over a raw window and over 30 days of rollups (series blocks, hourly rollups, region rollups built, and
raw edges): a reading of one workload cannot use the region rollups, which hold every probe of a region."""

from __future__ import annotations

from datetime import timedelta

import pytest

from latency.forms import dashboard_filters
from probes import readings
from probes.histogram import exact_percentile
from probes.models import Measurement
from probes.readings.plan import complete_days, coverage
from probes.rollups import floor_hour, rebuild_range
from tests.factories import spread_measurements

# Nearest rank from a 2% bucket's geometric midpoint (probes.readings); exact on a raw window.
BUCKET = 0.01
# Median TTFT (ms) each target's probes add to TTFB: fast for the short prompt, slow for 100k tokens, and the
# two targets in the opposite order for each workload, so a ranking of the wrong rows shows in its order.
MEDIANS = {"alpha": {"short": 100.0, "prompt_100k": 4000.0}, "beta": {"short": 400.0, "prompt_100k": 1500.0}}


@pytest.fixture
def region(make_region):
    return make_region(slug="lagos", name="Lagos")


@pytest.fixture
def probes(make_probe, make_target, region):
    probes = {}
    for name in MEDIANS:
        target = make_target(name=name)
        for workload in ("short", "prompt_100k"):
            probes[(name, workload)] = make_probe(target=target, regions=[region], workload=workload)
    return probes


def store(probes, region, since, until, count):
    for seed, ((name, workload), probe) in enumerate(probes.items()):
        median = MEDIANS[name][workload]
        spread_measurements(probe, region, since, until, count, seed=seed, median=median, workload=workload)
        if workload == "short":
            # Rows stored before probes had workloads: no workload, all sent the short prompt. Seconds after the
            # others, so that no two share a slot.
            later = since + timedelta(seconds=7)
            spread_measurements(probe, region, later, until, count // 4, seed=100 + seed, median=median)


def exact(target_id, f, workload: str | None) -> list[float]:
    rows = Measurement.objects.filter(target_id=target_id, started_at__gte=f.since, started_at__lt=f.until)
    if workload == "short":
        rows = rows.filter(workload__in=["short"]) | rows.filter(workload__isnull=True)
    elif workload:
        rows = rows.filter(workload=workload)
    return [v for v in rows.values_list("ttft_ms", flat=True) if v is not None]


def check(probes, region, f, rel):
    targets = {name: probes[(name, "short")].target_id for name in MEDIANS}
    workload = f.workload or None
    expected = {name: exact(tid, f, workload) for name, tid in targets.items()}
    p50 = {name: exact_percentile(values, 0.5) for name, values in expected.items()}
    order = sorted(targets, key=lambda name: p50[name])

    ranking = readings.ranking(region.slug, f)
    assert [row["target"] for row in ranking] == order
    for row in ranking:
        assert row["samples"] == len(expected[row["target"]])
        assert row["p50"] == pytest.approx(p50[row["target"]], rel=rel)

    for row in readings.table(f):
        assert row["p50"] == pytest.approx(p50[row["target"]], rel=rel)

    board = readings.leaderboard(list(targets.values()), f)
    assert [row["target_name"] for row in board] == order
    for row in board:
        assert row["n"] == len(expected[row["target_name"]])
        assert row["p50_ttft_ms"] == pytest.approx(p50[row["target_name"]], rel=rel)
    (line,) = readings.leaderboard_matrix(list(targets.values()), f)
    by_target = {cell["target"]: cell["value"] for cell in line["cells"]}
    for name, tid in targets.items():
        assert by_target[tid] == pytest.approx(p50[name], rel=rel)

    mixed = readings.mix({region.id: 1.0}, f)
    assert [row["target"] for row in mixed] == order

    # The map (every target by region): the region rollups hold every workload, so one workload reads per probe.
    everything = [v for values in expected.values() for v in values]
    (summary,) = readings.summary(f)
    assert summary["samples"] == len(everything)
    assert summary["p50"] == pytest.approx(exact_percentile(everything, 0.5), rel=rel)
    series = readings.series(f)
    assert sum(row["samples"] for row in series) == len(everything)
    return {name: p50[name] for name in targets}


@pytest.mark.parametrize("window", ["1h", "30d"])
def test_each_workload_ranks_its_own_calls_and_no_workload_mixes_them(probes, region, now, window):
    if window == "1h":
        store(probes, region, now - timedelta(minutes=59), now, 40)
    else:
        since = now - timedelta(days=30)
        store(probes, region, since, now, 360)
        rebuild_range(floor_hour(since), floor_hour(now))

    medians = {}
    for workload in ("", "short", "prompt_100k"):
        f = dashboard_filters({"window": [window], "workload": [workload]}, now)
        assert f.workload == workload
        if window == "30d":
            assert complete_days(coverage(f.since, f.until).hours)[0]  # days from rollups, not raw rows alone
        medians[workload] = check(probes, region, f, BUCKET if window == "30d" else 0)

    # The slow workload is slow for each target, the short one fast, and all of them mixed lies in between.
    for name in MEDIANS:
        assert medians["short"][name] < medians[""][name] < medians["prompt_100k"][name]
    assert [min(m, key=m.get) for m in (medians["short"], medians["prompt_100k"])] == ["alpha", "beta"]


def test_a_workload_no_probe_has_reads_nothing_from_rollups_or_rows(probes, region, now):
    since = now - timedelta(days=3)
    store(probes, region, since, now, 60)
    rebuild_range(floor_hour(since), floor_hour(now))
    f = dashboard_filters({"window": ["7d"], "workload": ["cached_pair"]}, now)
    assert readings.ranking(region.slug, f) == []
    assert readings.summary(f)[0]["samples"] == 0
    assert readings.series(f) == []


def test_a_probe_whose_workload_changed_counts_its_raw_rows_by_their_own_and_its_rollups_by_its_current_one(
    probes, region, now
):
    probe = probes[("alpha", "short")]
    since = now - timedelta(hours=30)
    store({("alpha", "short"): probe}, region, since, now, 300)
    rebuild_range(floor_hour(since), floor_hour(now))
    probe.workload = "prompt_10k"
    probe.save(update_fields=["workload"])

    # Raw rows: each by the workload it was sent with.
    raw = dashboard_filters({"window": ["1h"], "workload": ["short"]}, now)
    (row,) = readings.ranking(region.slug, raw)
    assert row["samples"] == len(exact(probe.target_id, raw, "short"))
    assert readings.ranking(region.slug, dashboard_filters({"window": ["1h"], "workload": ["prompt_10k"]}, now)) == []

    # Rolled-up hours: by the probe's workload now (a rollup keeps its probe, not the rows' workloads). A window
    # starting early in a marked hour reads it from its rollups less its rows before the window, narrowed alike.
    start = floor_hour(since) + timedelta(hours=2, minutes=10)
    params = {"window": ["custom"], "since": [start.isoformat()], "until": [now.isoformat()]}
    ten_k = dashboard_filters({**params, "workload": ["prompt_10k"]}, now)
    assert coverage(ten_k.since, ten_k.until, head=True).head is not None
    every = dashboard_filters(params, now)
    (all_rows,) = readings.ranking(region.slug, every)
    (rolled,) = readings.ranking(region.slug, ten_k)
    (short,) = readings.ranking(region.slug, dashboard_filters({**params, "workload": ["short"]}, now))
    # Marked hours count as prompt_10k now, the current hour's raw rows as the short calls they were.
    assert rolled["samples"] + short["samples"] == all_rows["samples"]
    assert 0 < short["samples"] < rolled["samples"]
