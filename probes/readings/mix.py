"""A traffic mix: every target ranked by the latency a given mix of users
would see ("60 % of my users are in Lagos, 40 % in London").

The users of a mix meet one distribution per target, the mixture of the
regions' distributions: each region's values (or histogram buckets) count
as its share of the users divided by its number of values, so a region with
few measurements weighs as much as its users do, not as little as its
samples. Percentiles are read from that merged mixture by the one rule of
probes.readings (the smallest value whose cumulative share reaches q, which
is the nearest rank when every value weighs the same), never averaged from
per-region percentiles: a mean of medians can rank a target that is fast
for most users below one that is mediocre for everyone.

A region of the mix without values of the metric for a target is not
quietly dropped: the mixture is read over the regions that have values,
and the row says which share of the mix that covers (coverage) and which
regions are missing; such targets rank after every fully covered one.

The fiber floor of the mix is the same mixture over the regions' physical
floors (probes.geo.path_floor_ms, the map's floor: a round trip in fiber to
the target's location), one value per region at the region's share.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from probes.geo import path_floor_ms
from probes.histogram import bucket_value
from probes.metrics import BY_NAME
from probes.models import Region, Target
from probes.readings.rows import MixRegionRow, MixRow, MixShare, Reading
from probes.readings.selection import BadParameter, Selection

# The table's reading (region x target readings of a window, raw values kept
# on raw windows): the mix reads exactly what the per-region figures read.
from probes.readings.summaries import _read

# Cumulative shares are sums of floats: a share that reaches q within this
# (relative) slack has reached it, as probes.histogram._rank rounds q * n.
SLACK = 1e-9


Parts = Iterable[tuple[float, Sequence[tuple[float, int]]]]


def mixture_percentiles(parts: Parts, qs: Sequence[float]) -> list[float | None]:
    """The qs-quantiles of a mixture, sorted once. parts: (weight, [(value,
    count), ...]) per component; each component's values share its weight
    in proportion to their counts. The weights need not add up to 1 (the
    mixture is read over the components given). Each quantile is the
    smallest value whose cumulative share reaches q; None without any value."""
    for q in qs:
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"quantile must be within [0, 1], got {q!r}")
    points: list[tuple[float, float]] = []
    total = 0.0
    for weight, items in parts:
        n = sum(count for _, count in items)
        if weight <= 0 or not n:
            continue
        total += weight
        points.extend((value, weight * count / n) for value, count in items if count)
    if not points:
        return [None] * len(qs)
    points.sort(key=lambda point: point[0])
    found: list[float | None] = []
    for q in qs:
        need = q * total - SLACK * total
        seen = 0.0
        for value, mass in points:
            seen += mass
            if seen >= need:
                found.append(value)
                break
        else:
            found.append(points[-1][0])
    return found


def mixture_percentile(parts: Parts, q: float) -> float | None:
    """The q-quantile of a mixture (see mixture_percentiles)."""
    return mixture_percentiles(parts, [q])[0]


def normalised(shares: Mapping[int, float]) -> dict[int, float]:
    """Region id to share of the users, adding up to 1, without the regions at 0."""
    for region_id, share in shares.items():
        if not (isinstance(share, (int, float)) and math.isfinite(share) and share >= 0):
            raise BadParameter("share", f"the share of region {region_id} must be a number of 0 or more")
    total = sum(shares.values())
    if not total > 0:
        raise BadParameter("share", "a mix needs at least one region with a share above 0")
    return {region_id: share / total for region_id, share in shares.items() if share > 0}


def mix_shares(shares: Mapping[int, float]) -> list[MixShare]:
    """The mix as people read it: its regions with their normalised shares,
    largest share first (then by name). BadParameter for an unknown region."""
    weights = normalised(shares)
    info = {r["id"]: r for r in Region.objects.filter(id__in=list(weights)).values("id", "slug", "name", "city")}
    unknown = sorted(set(weights) - set(info))
    if unknown:
        raise BadParameter("share", f"unknown region id {', '.join(map(str, unknown))}")
    rows = [
        MixShare(
            region_id=rid,
            slug=info[rid]["slug"],
            name=info[rid]["name"],
            city=info[rid]["city"],
            share=weights[rid],
        )
        for rid in weights
    ]
    rows.sort(key=lambda row: (-row["share"], row["name"], row["slug"]))
    return rows


def _points(reading: Reading | None, f: Selection) -> list[tuple[float, int]]:
    """A reading's values of f.metric as (value, count): the raw values when
    the window kept them (exact), else the histogram's buckets at their
    midpoints, as Histogram.percentile reads them."""
    if reading is None:
        return []
    values = reading.values.get(BY_NAME[f.metric].column)
    if values:
        return [(value, 1) for value in values]
    hist = reading.hists.get(f.metric)
    if hist is None:
        return []
    return [(bucket_value(int(index)), count) for index, count in hist.to_sparse().items()]


def _target_row(
    target: dict,
    mix: list[MixShare],
    coords: dict[int, tuple[float, float]],
    readings: dict[tuple, Reading],
    f: Selection,
) -> MixRow:
    located = target["latitude"] is not None and target["longitude"] is not None
    regions: list[MixRegionRow] = []
    parts: list[tuple[float, list[tuple[float, int]]]] = []
    covered = 0.0
    samples = errors = 0
    # The error rate the mix's users would meet: each region's rate at its share.
    measured = failing = 0.0
    for share in mix:
        reading = readings.get((share["region_id"], target["id"]))
        points = _points(reading, f)
        n = sum(count for _, count in points)
        if n:
            parts.append((share["share"], points))
        if n:
            covered += share["share"]
        if reading is not None and reading.samples:
            samples += reading.samples
            errors += reading.errors
            measured += share["share"]
            failing += share["share"] * reading.errors / reading.samples
        floor = None
        if located:
            lat, lon = coords[share["region_id"]]
            floor = path_floor_ms(lat, lon, target["latitude"], target["longitude"])
        regions.append(
            MixRegionRow(
                **share,
                samples=reading.samples if reading is not None else 0,
                values=n,
                has_data=bool(n),
                floor_ms=floor,
            )
        )

    p50, p95, value = mixture_percentiles(parts, (0.5, 0.95, f.percentile))
    floors = [(row["share"], [(row["floor_ms"], 1)]) for row in regions if row["floor_ms"] is not None]
    floor_p50, floor_p95 = mixture_percentiles(floors, (0.5, 0.95)) if located else (None, None)
    complete = covered >= 1 - SLACK
    tax = None
    # The tax compares like with like: a time metric, measured for the whole mix the floor is for.
    if complete and p50 is not None and floor_p50 is not None and BY_NAME[f.metric].unit == "ms":
        tax = p50 - floor_p50
    return MixRow(
        target_id=target["id"],
        target=target["name"],
        model=target["model"],
        location_name=target["location_name"],
        samples=samples,
        errors=errors,
        error_rate=failing / measured if measured else None,
        p50=p50,
        p95=p95,
        value=value,
        # Exactly 1 when complete, so complete rows tie on it whatever the float sums did.
        coverage=1.0 if complete else covered,
        complete=complete,
        missing=[row["name"] for row in regions if not row["has_data"]],
        floor_p50=floor_p50,
        floor_p95=floor_p95,
        tax_ms=tax,
        regions=regions,
    )


def mix(shares: Mapping[int, float], f: Selection) -> list[MixRow]:
    """Every target as the users of a mix would see it, best first.

    shares: region id to a non-negative number (users, or a percentage; they
    are normalised to add up to 1); at least one above 0. f's window, metric
    and percentile apply; f.target_ids and f.region_ids are ignored (every
    target, the mix's regions).

    Rows (MixRow): samples and errors of the mix's regions; error_rate (each
    region's rate at its share); p50, p95 and value (f.percentile) of the
    mixture of f.metric, over the regions with values; coverage, complete, missing; floor_p50 and
    floor_p95 of the mix's fiber floors (None for a target without a
    location); tax_ms; regions (per region: share, samples, values,
    has_data, floor_ms).

    Order: fully covered targets first, then by coverage, largest first;
    within each, by value (f.percentile): lower first, higher
    first for tokens_per_s; targets without a value last."""
    people = mix_shares(shares)
    coords = {
        r["id"]: (r["latitude"], r["longitude"])
        for r in Region.objects.filter(id__in=[s["region_id"] for s in people]).values("id", "latitude", "longitude")
    }
    targets = list(Target.objects.values("id", "name", "model", "location_name", "latitude", "longitude"))
    readings = _read(
        f,
        ("region_id", "target_id"),
        target_ids=[t["id"] for t in targets],
        region_ids=[s["region_id"] for s in people],
    )
    rows = [_target_row(target, people, coords, readings, f) for target in targets]
    sign = -1 if BY_NAME[f.metric].higher_is_better else 1

    def rank_key(row: MixRow) -> tuple:
        value = row["value"]
        return (
            value is None,
            not row["complete"],
            -row["coverage"],
            sign * value if value is not None else 0,
            row["target"],
        )

    rows.sort(key=rank_key)
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows
