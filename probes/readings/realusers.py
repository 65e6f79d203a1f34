"""Real users' figures (probes.realusers): what every page, the API and real-users.csv show of them.

Hour resolution. Real users are read from ObservationRollup alone, never from raw Observation rows: the
rollups are written at ingest, in the transaction that stores the raw rows, and they also hold the OTLP
metric histograms, which have no raw rows at all. So a window [since, until) is read by whole UTC hours:
every hour that starts before `until` and does not end before `since` counts whole (the hour holding
`since` included), and a bucket is an hour, a day or the whole window, never less.

Percentiles are read from the group's merged histograms (probes.histogram: counts add, so two hours of
different distributions give the percentile of all their calls); never an average of percentiles.

k-anonymity. A row is shown only when the calls it stands for reach LATENCY_REAL_USERS_MIN_SAMPLES (5 by
default) in its window or bucket, so no single user's place (and what they called from there) can be read
off a page, the map or the CSV. Rows under the minimum are left out and counted (`withheld`), so a page can
say why it shows nothing.

Facade:
    rows(since, until, target_ids=..., by_target=True, bucket=None)   place [x target] [x bucket]
                                    -> [RealUserRow]  (the CSV's rows, the map's markers with by_target=False)
    nearby(since, until, region_ids=..., target_ids=...)
                                    real users within NEAR_KM of each region's city beside that region's probes
                                    and the fiber floor to the target -> Nearby
    region_shares(since, until)     the real users' places as a traffic mix of the nearest regions
                                    -> {region_id: calls}
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings

from probes.geo import great_circle_km, path_floor_ms
from probes.histogram import Histogram
from probes.metrics import PERCENTILES, REAL_USERS
from probes.readings.selection import Selection, aware
from probes.rollups.periods import DAY, HOUR, floor_day, floor_hour

# The percentiles shown of real users (pages, map, CSV).
REAL_PERCENTILES = ("p50", "p95")
# "Near" a region: a user within this distance of the region's city. 300 km is a metro area and its
# hinterland (Lagos to Ibadan, London to Birmingham) while keeping neighbouring regions' cities apart
# (Frankfurt to Paris is 480 km); light in fiber covers it there and back in three milliseconds, well
# under what the panels compare.
NEAR_KM = 300.0


def figure_keys() -> tuple[str, ...]:
    """The names of a row's figures, from probes.metrics.REAL_USERS: ttft_p50, ttft_p95, total_p50, ..."""
    return tuple(f"{m.name}_{p}" for m in REAL_USERS for p in REAL_PERCENTILES)


def _empty_hists() -> dict[str, Histogram]:
    return {m.name: Histogram() for m in REAL_USERS}


@dataclass
class Group:
    """Merged calls of one group: counts and one histogram per REAL_USERS metric."""

    samples: int = 0
    errors: int = 0
    hists: dict[str, Histogram] = field(default_factory=_empty_hists)

    def add(self, samples: int, errors: int, hists: dict[str, Histogram]) -> None:
        self.samples += samples
        self.errors += errors
        for name, hist in hists.items():
            self.hists[name].merge(hist)

    def figures(self) -> dict[str, float | None]:
        return {
            f"{m.name}_{p}": self.hists[m.name].percentile(PERCENTILES[p]) for m in REAL_USERS for p in REAL_PERCENTILES
        }


@dataclass
class RealUserRow:
    """Real users' calls from one place (and to one target, or one host and model for other providers),
    over the window or one bucket of it. Times in ms; None when no call of the group reported the metric."""

    bucket: datetime | None  # start of the bucket (UTC); None for the whole window
    country: str
    city: str
    latitude: float | None
    longitude: float | None
    target_id: int | None  # None: other providers (or, in place rows, every target together)
    target: str  # the target's name; "" for other providers
    host: str  # other providers' host; "" for a target
    model: str  # other providers' model, or the target's
    samples: int
    errors: int
    figures: dict[str, float | None]  # figure_keys() -> ms
    hists: dict[str, Histogram] = field(repr=False, compare=False, default_factory=_empty_hists)

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.samples if self.samples else None

    @property
    def place(self) -> str:
        return ", ".join(x for x in (self.city, self.country) if x)


@dataclass
class Rows:
    rows: list[RealUserRow]
    received: int  # calls in the window (under the filters), shown or not
    withheld: int  # calls in groups under the minimum, left out


def min_samples() -> int:
    return int(settings.LATENCY_REAL_USERS_MIN_SAMPLES)


def _rollups(since: datetime, until: datetime, target_ids: Iterable[int] = ()) -> Iterator[tuple]:
    from probes.models import ObservationRollup

    qs = ObservationRollup.objects.filter(hour__gte=floor_hour(aware(since)), hour__lt=aware(until))
    ids = list(target_ids)
    if ids:
        qs = qs.filter(target_id__in=ids)
    found: Iterator[tuple] = qs.values_list(
        "hour",
        "target_id",
        "host",
        "model",
        "country",
        "city",
        "latitude",
        "longitude",
        "samples",
        "errors",
        *(f"{m.name}_hist" for m in REAL_USERS),
    ).iterator(chunk_size=2000)
    return found


def _bucket_of(hour: datetime, bucket: timedelta | None) -> datetime | None:
    if bucket is None:
        return None
    return floor_day(hour) if bucket == DAY else hour


def rows(
    since: datetime,
    until: datetime,
    *,
    target_ids: Iterable[int] = (),
    by_target: bool = True,
    bucket: timedelta | None = None,
) -> Rows:
    """Real users' rows over [since, until) by whole hours (see the module), ordered by bucket, country, city,
    target, host, model. target_ids: only those targets' calls (empty: every call, other providers included).
    by_target=False: one row per place, every target and provider together (the map). bucket: HOUR or DAY
    (a day bucket starts at midnight UTC, as regions.csv's do); None for the whole window."""
    from probes.models import Target

    if bucket is not None and bucket not in (HOUR, DAY):
        raise ValueError("real users are read by the hour or the day")
    groups: dict[tuple, Group] = defaultdict(Group)
    for hour, target_id, host, model, country, city, lat, lon, samples, errors, *hists in _rollups(
        since, until, target_ids
    ):
        who: tuple = (None, "", "")  # a place row: every target and provider together
        if by_target:
            who = (target_id, "", "") if target_id is not None else (None, host, model)
        key = (_bucket_of(hour, bucket), country, city, lat, lon, *who)
        parsed = {m.name: Histogram.from_sparse(h or {}) for m, h in zip(REAL_USERS, hists, strict=True)}
        groups[key].add(samples, errors, parsed)
    names = dict(Target.objects.values_list("id", "name"))
    models = dict(Target.objects.values_list("id", "model"))
    k = min_samples()
    shown: list[RealUserRow] = []
    received = withheld = 0
    for (start, country, city, lat, lon, target_id, host, model), g in groups.items():
        received += g.samples
        if g.samples < k:
            withheld += g.samples
            continue
        shown.append(
            RealUserRow(
                bucket=start,
                country=country,
                city=city,
                latitude=lat,
                longitude=lon,
                target_id=target_id,
                target=names.get(target_id, "") if target_id is not None else "",
                host=host,
                model=models.get(target_id, "") if target_id is not None else model,
                samples=g.samples,
                errors=g.errors,
                figures=g.figures(),
                hists=g.hists,
            )
        )
    shown.sort(key=lambda r: (r.bucket or since, r.country, r.city, r.target, r.host, r.model))
    return Rows(shown, received, withheld)


@dataclass
class NearbyRow:
    """One region x target: real users near the region's city, the region's probes, and the fiber floor
    from the region to the target's location (None when the target has none)."""

    region_id: int
    region_slug: str
    region_name: str
    region_city: str
    target_id: int
    target: str
    places: list[str]  # the real users' places merged here, "Lagos, NG"
    users: dict[str, float | None]  # figure_keys() -> ms, of the real users near the region
    user_samples: int
    probes: dict[str, float | None]  # figure_keys() -> ms, of the region's probes
    probe_samples: int
    floor_ms: float | None


@dataclass
class Nearby:
    rows: list[NearbyRow]
    received: int  # real-user calls to the targets in the window, anywhere
    withheld: int  # of them, calls from places under the minimum
    radius_km: float = NEAR_KM


def _probe_figures(since: datetime, until: datetime, region_ids: list[int], target_ids: list[int]) -> dict:
    """(region_id, target_id) -> (samples, figures) of the probes, read like every other probe figure."""
    from probes.readings.summaries import _read

    names = [m.name for m in REAL_USERS]
    f = Selection(since=since, until=until, metric=names[0], target_ids=target_ids, region_ids=region_ids)
    readings = _read(f, ("region_id", "target_id"), *names[1:], target_ids=target_ids, region_ids=region_ids)
    return {
        key: (
            r.samples,
            {f"{m}_{p}": r.percentile(m, PERCENTILES[p]) for m in names for p in REAL_PERCENTILES},
        )
        for key, r in readings.items()
    }


def nearby(
    since: datetime,
    until: datetime,
    *,
    region_ids: Iterable[int] | None = None,
    target_ids: Iterable[int] | None = None,
    radius_km: float = NEAR_KM,
) -> Nearby:
    """Per region x target, the real users within radius_km of the region's city (their places merged, each
    place first shown only at the minimum of calls), beside the region's probes of that target over the same
    window and the fiber floor between the region and the target. Only pairs with real users near the region
    are returned; other providers are left out (no probe measures them)."""
    from probes.models import Region, Target

    regions = Region.objects.all() if region_ids is None else Region.objects.filter(id__in=list(region_ids))
    region_list = list(regions.values("id", "slug", "name", "city", "latitude", "longitude"))
    targets = {
        t["id"]: t
        for t in (Target.objects.all() if target_ids is None else Target.objects.filter(id__in=list(target_ids)))
        .values("id", "name", "latitude", "longitude")
        .order_by("name")
    }
    read = rows(since, until, target_ids=list(targets) or [0])
    merged: dict[tuple[int, int], Group] = defaultdict(Group)
    places: dict[tuple[int, int], list[str]] = defaultdict(list)
    for row in read.rows:
        if row.target_id is None or row.latitude is None or row.longitude is None:
            continue
        for region in region_list:
            if great_circle_km(row.latitude, row.longitude, region["latitude"], region["longitude"]) <= radius_km:
                key = (region["id"], row.target_id)
                merged[key].add(row.samples, row.errors, row.hists)
                places[key].append(row.place)
    probes = (
        _probe_figures(since, until, sorted({r for r, _ in merged}), sorted({t for _, t in merged})) if merged else {}
    )
    by_id = {r["id"]: r for r in region_list}
    out = []
    for (region_id, target_id), g in merged.items():
        region, target = by_id[region_id], targets[target_id]
        floor = None
        if target["latitude"] is not None and target["longitude"] is not None:
            floor = path_floor_ms(region["latitude"], region["longitude"], target["latitude"], target["longitude"])
        probe_samples, probe_figures = probes.get((region_id, target_id), (0, dict.fromkeys(figure_keys())))
        out.append(
            NearbyRow(
                region_id=region_id,
                region_slug=region["slug"],
                region_name=region["name"],
                region_city=region["city"],
                target_id=target_id,
                target=target["name"],
                places=sorted(set(places[(region_id, target_id)])),
                users=g.figures(),
                user_samples=g.samples,
                probes=probe_figures,
                probe_samples=probe_samples,
                floor_ms=floor,
            )
        )
    out.sort(key=lambda r: (r.region_name, r.target))
    return Nearby(out, read.received, read.withheld, radius_km)


def region_shares(since: datetime, until: datetime, region_ids: Iterable[int] | None = None) -> dict[int, float]:
    """The real users' places as a traffic mix: each shown place's calls go to the nearest of the regions
    (active ones by default), whatever the distance, so every user counts somewhere. {region_id: calls}."""
    from probes.models import Region

    regions = Region.objects.filter(active=True) if region_ids is None else Region.objects.filter(id__in=region_ids)
    coords = list(regions.values_list("id", "latitude", "longitude"))
    shares: dict[int, float] = defaultdict(float)
    if not coords:
        return {}
    for row in rows(since, until, by_target=False).rows:
        lat, lon = row.latitude, row.longitude
        if lat is None or lon is None:
            continue
        nearest = min(coords, key=lambda c: great_circle_km(lat, lon, c[1], c[2]))
        shares[nearest[0]] += row.samples
    return dict(shares)
