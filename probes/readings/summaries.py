"""Figures over one window: per region (the map), per region x target (the
table), per target from one region (the ranking), the phase breakdown and
the distribution (histograms). One read_window each; see probes.readings for
where the numbers come from and how exact they are.
"""

from __future__ import annotations

from collections.abc import Iterable

from probes.geo import latency_tax_ms, path_floor_ms
from probes.histogram import Histogram
from probes.metrics import BY_NAME, PHASES
from probes.models import Probe, Region, Target
from probes.readings.fleet import missed_counts
from probes.readings.rows import (
    DistributionRow,
    PhaseRow,
    RankingRow,
    Reading,
    RegionSummaryRow,
    TableRow,
    TargetDistributionRow,
)
from probes.readings.selection import BadParameter, Selection
from probes.readings.window import read_window

PHASE_METRICS = tuple(m.name for m in PHASES)
SEGMENTS = ("dns", "connect", "tls", "server_wait", "first_token", "streaming")


def _scope(f: Selection) -> tuple[list[int], list[int]]:
    """Explicit id lists even for "all": with both leading columns bound the
    (target, region, started_at) index is walked once per pair and never
    scanned across a target's whole history."""
    targets = f.target_ids or list(Target.objects.values_list("id", flat=True))
    regions = f.region_ids or list(Region.objects.values_list("id", flat=True))
    return targets, regions


def _read(
    f: Selection,
    group_by: tuple[str, ...],
    *extra: str,
    target_ids: list[int] | None = None,
    region_ids: list[int] | None = None,
    every_target: bool | None = None,
    every_region: bool | None = None,
) -> dict[tuple, Reading]:
    """Readings of f's window with histograms of f.metric and `extra`, and
    on a raw window the raw values of all of them (exact percentiles).
    target_ids / region_ids: f's scope (_scope) unless given. every_target /
    every_region: whether they are every target / region (read_window then
    reads rollups with no condition on them); by default when f names none
    and the caller gave no list of its own."""
    if every_target is None:
        every_target = not f.target_ids and target_ids is None
    if every_region is None:
        every_region = not f.region_ids and region_ids is None
    if target_ids is None or region_ids is None:
        targets, regions = _scope(f)
        target_ids = targets if target_ids is None else target_ids
        region_ids = regions if region_ids is None else region_ids
    metrics = [f.metric, *(m for m in extra if m != f.metric)]
    # A raw window keeps the values, so its percentiles are exact.
    kept = tuple(BY_NAME[m].column for m in metrics) if f.raw_only else ()
    return read_window(
        f.since,
        f.until,
        group_by=group_by,
        target_ids=target_ids,
        region_ids=region_ids,
        metrics=metrics,
        rollups=not f.raw_only,
        raw_values=kept,
        cache=True,
        # "All targets": _scope's explicit ids serve the raw part, region
        # rollups the rest when grouped by region (window.read_window).
        every_target=every_target,
        every_region=every_region,
        # Every figure of the selection reads its probes and its workload alone (probes.readings.workload).
        probe_ids=f.probe_ids or None,
        workload=f.workload,
    )


def _metric_stats(reading: Reading, f: Selection) -> tuple[float | None, float | None, float | None]:
    """(p50, p95, value: the selection's percentile) of the chosen metric in a reading."""
    p50, p95, value = reading.percentiles(f.metric, 0.5, 0.95, f.percentile)
    return p50, p95, value


def _regions(ids: Iterable[int]) -> dict[int, dict]:
    return {
        r["id"]: r
        for r in Region.objects.filter(id__in=list(ids)).values(
            "id", "slug", "name", "city", "country", "latitude", "longitude"
        )
    }


def _targets(ids: Iterable[int]) -> dict[int, dict]:
    return {
        t["id"]: t
        for t in Target.objects.filter(id__in=list(ids)).values(
            "id", "name", "model", "location_name", "latitude", "longitude"
        )
    }


def summary(f: Selection) -> list[RegionSummaryRow]:
    """One row per region with data, plus the regions the selected targets'
    enabled probes run from that have none (samples 0), by region name.

    Keys: id, slug, name, city, country, lat, lon, samples, errors,
    error_rate, p50, p95, value (f.percentile) of f.metric, connect_p50,
    floor_ms (round-trip fiber floor to the target's hosting location; only
    with exactly one target selected that has coordinates), tax_ms
    (connect_p50 - floor_ms)."""
    targets, regions = _scope(f)
    grouped = _read(
        f,
        ("region_id",),
        "connect",
        target_ids=targets,
        region_ids=regions,
        every_target=not f.target_ids,
        every_region=not f.region_ids,
    )
    readings: dict[int, Reading] = {key[0]: r for key, r in grouped.items() if r.samples}
    expected = set(
        Probe.objects.filter(enabled=True, target_id__in=targets, regions__id__in=regions).values_list(
            "regions__id", flat=True
        )
    )
    info = _regions(set(readings) | expected)
    target = None
    if len(f.target_ids) == 1:
        target = _targets(f.target_ids).get(f.target_ids[0])
    rows: list[RegionSummaryRow] = []
    for region_id, region in info.items():
        reading = readings.get(region_id)
        floor = None
        if target and target["latitude"] is not None and target["longitude"] is not None:
            floor = path_floor_ms(region["latitude"], region["longitude"], target["latitude"], target["longitude"])
        if reading is None:
            p50 = p95 = value = connect = None
            samples = errors = 0
            error_rate = None
        else:
            p50, p95, value = _metric_stats(reading, f)
            connect = reading.percentile("connect", 0.5)
            samples, errors, error_rate = reading.samples, reading.errors, reading.error_rate
        rows.append(
            {
                "id": region_id,
                "slug": region["slug"],
                "name": region["name"],
                "city": region["city"],
                "country": region["country"],
                "lat": region["latitude"],
                "lon": region["longitude"],
                "samples": samples,
                "errors": errors,
                "error_rate": error_rate,
                "p50": p50,
                "p95": p95,
                "value": value,
                "connect_p50": connect,
                "floor_ms": floor,
                "tax_ms": latency_tax_ms(connect, floor) if floor is not None else None,
            }
        )
    rows.sort(key=lambda row: (row["name"], row["slug"]))
    return rows


def distribution_rows(f: Selection) -> tuple[dict[str, Histogram], list[DistributionRow]]:
    """distribution(f), and a row per region with its count and its p50 and
    p95 by the one rule (exact on a raw window, where the drawn histogram
    would only give its buckets' midpoints): the numbers the table shows."""
    readings = _read(f, ("region_id",))
    hists, kept = {}, {}
    for (region_id,), reading in readings.items():
        hist = reading.hists[f.metric]
        if hist.count:
            hists[region_id], kept[region_id] = hist, reading
    info = _regions(hists)
    order = sorted(hists, key=lambda rid: (info[rid]["name"], info[rid]["slug"]))
    rows = [
        DistributionRow(
            region=info[rid]["slug"],
            samples=hists[rid].count,
            p50=kept[rid].percentile(f.metric, 0.5),
            p95=kept[rid].percentile(f.metric, 0.95),
        )
        for rid in order
    ]
    return {info[rid]["slug"]: hists[rid] for rid in order}, rows


def distribution_by_target(
    f: Selection,
) -> tuple[dict[tuple[int, str], Histogram], list[TargetDistributionRow]]:
    """distribution_rows(f) per target: {(target_id, region slug): Histogram} and a row per target x region
    with values, by target name then region name. Each histogram holds one target's values only, so two
    targets are never merged into one distribution (the figures keep them apart unless asked to pool)."""
    readings = _read(f, ("region_id", "target_id"))
    kept = {key: r for key, r in readings.items() if r.hists[f.metric].count}
    regions = _regions({rid for rid, _ in kept})
    targets = _targets({tid for _, tid in kept})

    def order(key: tuple[int, int]) -> tuple:
        rid, tid = key
        return (targets[tid]["name"], tid, regions[rid]["name"], regions[rid]["slug"])

    hists: dict[tuple[int, str], Histogram] = {}
    rows: list[TargetDistributionRow] = []
    for rid, tid in sorted(kept, key=order):
        reading = kept[(rid, tid)]
        hist = reading.hists[f.metric]
        hists[(tid, regions[rid]["slug"])] = hist
        rows.append(
            {
                "region": regions[rid]["slug"],
                "region_name": regions[rid]["name"],
                "target_id": tid,
                "target": targets[tid]["name"],
                "samples": hist.count,
                "p50": reading.percentile(f.metric, 0.5),
                "p95": reading.percentile(f.metric, 0.95),
            }
        )
    return hists, rows


def distribution(f: Selection) -> dict[str, Histogram]:
    """Region slug to the merged histogram of f.metric, for regions with at
    least one value, in region-name order."""
    return distribution_rows(f)[0]


def table(f: Selection) -> list[TableRow]:
    """One row per (region, target) pair with data or with missed runs, by
    region then target name.

    Keys: region (the region's name, for display), region_slug, target (its
    name), target_id, model, samples, errors, error_rate, p50, p95, value
    (f.percentile) of f.metric, missed (scheduled runs in the window that no
    worker picked up and that still have no measurement; see fleet.py). A
    pair whose region went dark shows with 0 samples and its missed runs."""
    targets, regions_scope = _scope(f)
    readings = _read(
        f,
        ("region_id", "target_id"),
        target_ids=targets,
        region_ids=regions_scope,
        every_target=not f.target_ids,
        every_region=not f.region_ids,
    )
    readings = {key: r for key, r in readings.items() if r.samples}
    missed = missed_counts((f.since, f.until), targets, regions_scope)
    for key in missed:
        readings.setdefault(key, Reading())
    regions = _regions({rid for rid, _ in readings})
    targets_info = _targets({tid for _, tid in readings})
    rows: list[TableRow] = []
    for (region_id, target_id), reading in readings.items():
        p50, p95, value = _metric_stats(reading, f)
        region, target = regions[region_id], targets_info[target_id]
        rows.append(
            {
                "region": region["name"],
                "region_slug": region["slug"],
                "target": target["name"],
                "target_id": target_id,
                "model": target["model"],
                "samples": reading.samples,
                "errors": reading.errors,
                "error_rate": reading.error_rate,
                "p50": p50,
                "p95": p95,
                "value": value,
                "missed": missed.get((region_id, target_id), 0),
            }
        )
    rows.sort(key=lambda row: (row["region"], row["target"], row["target_id"]))
    return rows


def ranking(region_slug: str, f: Selection) -> list[RankingRow]:
    """Every target measured from one region in the window, best first:
    ranked by p50 of f.metric (TTFT unless the filters choose another), lower
    first, or higher first for tokens_per_s; rows without a value last.
    f.target_ids and f.region_ids are ignored: the region is the page's own.

    Keys: rank, target_id, target, model, location_name, samples, errors,
    error_rate, p50, p95, value."""
    region_id = Region.objects.filter(slug=region_slug).values_list("id", flat=True).first()
    if region_id is None:
        raise BadParameter("region", f"unknown region {region_slug!r}")
    targets = list(Target.objects.values_list("id", flat=True))
    readings = _read(f, ("target_id",), target_ids=targets, region_ids=[region_id], every_target=True)
    info = _targets(tid for (tid,), r in readings.items() if r.samples)
    rows: list[RankingRow] = []
    for (target_id,), reading in readings.items():
        if not reading.samples:
            continue
        p50, p95, value = _metric_stats(reading, f)
        target = info[target_id]
        rows.append(
            {
                "target_id": target_id,
                "target": target["name"],
                "model": target["model"],
                "location_name": target["location_name"],
                "samples": reading.samples,
                "errors": reading.errors,
                "error_rate": reading.error_rate,
                "p50": p50,
                "p95": p95,
                "value": value,
            }
        )
    sign = -1 if BY_NAME[f.metric].higher_is_better else 1

    def rank_key(row: RankingRow) -> tuple[bool, float, str]:
        score = row["p50"]
        return (score is None, sign * score if score is not None else 0, row["target"])

    rows.sort(key=rank_key)
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def phase_pieces(values: dict[str, float | None]) -> dict[str, float | None]:
    """The six pieces of the phase breakdown from its milestones (dns, connect, tls, ttfb, ttft, total: ms or
    None), None where the piece's own milestone is missing (a warm connection has no DNS, connect or TLS phase; a
    plain-HTTP target no first token). Each piece is measured from the furthest point the stack has reached and
    clamped at 0: milestones that are medians of a window need not be in order (see stack_segments). Of one
    measurement (/metrics' last result) the pieces are its own: server_wait = ttfb - (dns + connect + tls),
    first_token = ttft - ttfb, streaming = total - ttft."""
    reached = 0.0
    pieces: dict[str, float | None] = {}
    dns, connect, tls = (values[m] or 0.0 for m in ("dns", "connect", "tls"))
    milestones = [
        ("dns", dns if values["dns"] is not None else None),
        ("connect", dns + connect if values["connect"] is not None else None),
        ("tls", dns + connect + tls if values["tls"] is not None else None),
        ("server_wait", values["ttfb"]),
        ("first_token", values["ttft"]),
        ("streaming", values["total"]),
    ]
    for name, point in milestones:
        if point is None:
            pieces[name] = None
            continue
        pieces[name] = max(0.0, point - reached)
        reached = max(reached, point)
    return pieces


def stack_segments(medians: dict[str, float | None]) -> dict[str, float]:
    """Stack pieces from the phase medians (phase_pieces), a missing one adding nothing (0). These are
    differences of medians, not medians of differences: they can come out negative (the median TTFB of a window
    need not exceed its median DNS + connect + TLS), hence the clamping. The stack then ends at the total median
    whenever that is the largest milestone, as it is when every phase is present."""
    return {name: piece or 0.0 for name, piece in phase_pieces(medians).items()}


def phases(f: Selection, *, by_target: bool = False) -> list[PhaseRow]:
    """Where the time of a call goes, per region with data, by region name;
    by_target: per target x region, by target then region name, each row
    with target_id and target (its name) too.

    Keys: region (slug), region_name, samples, medians {dns, connect, tls,
    ttfb, ttft, total: ms or None}, segments {dns, connect, tls, server_wait,
    first_token, streaming: ms, never negative}. server_wait = ttfb - (dns +
    connect + tls), first_token = ttft - ttfb, streaming = total - ttft; see
    stack_segments for missing medians and clamping."""
    group = ("region_id", "target_id") if by_target else ("region_id",)
    grouped = {key: r for key, r in _read(f, group, *PHASE_METRICS).items() if r.samples}
    info = _regions({key[0] for key in grouped})
    names = _targets({key[1] for key in grouped}) if by_target else {}
    rows: list[PhaseRow] = []
    for key, reading in grouped.items():
        medians = {m: reading.percentile(m, 0.5) for m in PHASE_METRICS}
        row: PhaseRow = {
            "region": info[key[0]]["slug"],
            "region_name": info[key[0]]["name"],
            "samples": reading.samples,
            "medians": medians,
            "segments": stack_segments(medians),
        }
        if by_target:
            row["target_id"], row["target"] = key[1], names[key[1]]["name"]
        rows.append(row)
    rows.sort(key=lambda row: (row.get("target", ""), row.get("target_id", 0), row["region_name"], row["region"]))
    return rows
