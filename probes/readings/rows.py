"""The typed results of readings: Reading (the merged statistics of one
group) and the row shapes the facade returns. Rows are TypedDicts, i.e.
plain dicts at run time: the API serialises them as they are."""

from __future__ import annotations

from datetime import datetime
from typing import NotRequired, TypedDict

from probes.histogram import Histogram, exact_percentile
from probes.metrics import BY_NAME, HISTOGRAM

_HISTOGRAM_NAMES = frozenset(m.name for m in HISTOGRAM)


class _Hists(dict[str, Histogram]):
    """A reading's histograms by metric, each made empty when first asked for by [], so a reading holds only
    the ones it was given or asked for: a table of every target makes 900 readings of one metric each, 7,200
    empty histograms when all eight were made for each (docs/benchmarks.md, "Dashboard reads"). get() of one
    never made is None."""

    __slots__ = ()

    def __missing__(self, name: str) -> Histogram:
        if name not in _HISTOGRAM_NAMES:
            raise KeyError(name)
        hist = self[name] = Histogram()
        return hist


class Reading:
    """Merged statistics of one group over a window: counts, a histogram per
    histogram metric and, when the window was read from raw rows with
    values kept, the raw values by column (for exact percentiles)."""

    __slots__ = ("errors", "hists", "samples", "values")

    def __init__(self) -> None:
        self.samples = 0
        self.errors = 0
        self.hists: dict[str, Histogram] = _Hists()
        self.values: dict[str, list[float]] = {}

    def merge(self, other: Reading) -> None:
        """Add another group's counts and histograms (exact: counts add). Raw values are not merged."""
        self.samples += other.samples
        self.errors += other.errors
        for name, hist in other.hists.items():
            self.hists[name].merge(hist)

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.samples if self.samples else None

    def percentiles(self, metric: str, *qs: float) -> list[float | None]:
        """percentile(metric, q) of each q, the histogram's buckets sorted once."""
        if self.values.get(BY_NAME[metric].column):
            return [self.percentile(metric, q) for q in qs]
        hist = self.hists.get(metric)
        return hist.percentiles(*qs) if hist is not None else [None] * len(qs)

    def percentile(self, metric: str, q: float) -> float | None:
        """Exact nearest rank from the raw values when they were kept, else
        from the histogram (see probes.readings); None without either."""
        values = self.values.get(BY_NAME[metric].column)
        if values:
            return exact_percentile(values, q)
        hist = self.hists.get(metric)
        return hist.percentile(q) if hist is not None else None


class Figures(TypedDict):
    """What every summary row carries about its group: counts and the selected metric's figures."""

    samples: int
    errors: int
    error_rate: float | None
    p50: float | None
    p95: float | None
    value: float | None  # the selection's percentile


class RegionSummaryRow(Figures):
    id: int
    slug: str
    name: str
    city: str
    country: str
    lat: float
    lon: float
    connect_p50: float | None
    floor_ms: float | None
    tax_ms: float | None


class TableRow(Figures):
    region: str
    region_slug: str
    target: str
    target_id: int
    model: str
    missed: int  # scheduled runs no worker picked up (and still without a measurement)


class RankingRow(Figures, total=False):
    rank: int
    target_id: int
    target: str
    model: str
    location_name: str


class DistributionRow(TypedDict):
    region: str
    samples: int  # values of the metric, not measurements
    p50: float | None
    p95: float | None


class TargetDistributionRow(TypedDict):
    """A DistributionRow of one target in one region (the figures keep targets apart)."""

    region: str
    region_name: str
    target_id: int
    target: str
    samples: int  # values of the metric, not measurements
    p50: float | None
    p95: float | None


class PhaseRow(TypedDict):
    region: str
    region_name: str
    samples: int
    medians: dict[str, float | None]
    segments: dict[str, float]
    # Only when read per target (phases(by_target=True)).
    target_id: NotRequired[int]
    target: NotRequired[str]


class SeriesRow(TypedDict):
    bucket_start: datetime
    # Where the bucket's data is (UTC): the mean time of its measurements,
    # inside the part of the bucket within the window. Charts place the
    # point here: a bucket's start can lie hours before its first sample.
    at: datetime
    region: str
    region_name: str
    p50: float | None
    p95: float | None
    value: float | None  # the selection's percentile
    samples: int


class TargetSeriesRow(SeriesRow):
    """A SeriesRow of one target (series_by_target)."""

    target_id: int
    target: str


class BucketRow(TypedDict):
    """One regions.csv row: a time bucket x region x target."""

    bucket_start: datetime
    region_id: int
    target_id: int
    samples: int
    errors: int
    error_rate: float | None
    # (metric, percentile label) -> value, for probes.metrics.REGION_CSV.
    percentiles: dict[tuple[str, str], float | None]


class MixShare(TypedDict):
    """One region of a traffic mix: its share of the users, normalised so a mix's shares add up to 1."""

    region_id: int
    slug: str
    name: str
    city: str
    share: float


class MixRegionRow(MixShare):
    """One region of the mix as one target sees it."""

    samples: int  # measurements, failed ones included
    values: int  # values of the metric (what the mixture is made of)
    has_data: bool
    floor_ms: float | None  # round trip in fiber to the target's location; None without a location


class MixRow(Figures, total=False):
    """One target as a traffic mix sees it (probes.readings.mix)."""

    rank: int
    target_id: int
    target: str
    model: str
    location_name: str
    coverage: float  # the share of the mix whose regions have data, 0..1
    complete: bool  # every region of the mix has data
    missing: list[str]  # names of the mix's regions without data, by share
    floor_p50: float | None
    floor_p95: float | None
    tax_ms: float | None  # p50 - floor_p50, for a complete mix of a time metric
    regions: list[MixRegionRow]


class LeaderboardRow(TypedDict, total=False):
    """One target of a model group (probes.readings.leaderboard). The CIs are [low, high] or None; reason says
    why one is None (absent when both are there)."""

    target: int
    target_name: str
    rank: int
    p50_ttft_ms: float | None
    p95_ttft_ms: float | None
    p50_ttft_ci_ms: list[float] | None
    p95_ttft_ci_ms: list[float] | None
    tokens_per_s_p50: float | None
    success_ratio: float | None
    n: int  # calls in the window, failed ones included (regions.csv's samples)
    tied_with: list[int]
    reason: str


class MatrixCell(TypedDict):
    """One target in one region of the leaderboard's matrix: the chosen percentile of the chosen metric."""

    target: int
    value: float | None
    ci: list[float] | None
    n: int  # values of the metric the cell is read from
    winner: bool
    tied: bool  # not the winner, but its interval overlaps the winner's


class MatrixRow(TypedDict):
    region: str  # slug
    region_name: str
    cells: list[MatrixCell]  # in the leaderboard's target order
