"""THE list of rollup kinds, as probes.metrics is the list of metrics.

Why one list: a rollup kind used to be known only to the code that builds, prunes and tiles it, each naming its
grains, table and marks on its own, so a reader had to find five modules to learn what a kind is, and a new grain
touched all of them. Here each kind says what it is: the blocks it holds (grains), what a row is keyed by, its model,
what it is merged from, which marks say a row may be read, and the functions that build and prune it. The builder
(probes.rollups.build._build), the pruning (probes.rollups.prune), the grains of the builders and tilers
(probes.rollups.periods takes them from here), the planner's switches (in_use) and the catalogue's tests iterate
KINDS; docs/architecture/reading-a-window.md explains the words.

KINDS is in dependency order: a kind comes after the kind it is merged from (its source), because the rebuild of an
hour range calls the builders in this order in one transaction, each reading what the ones before it wrote, and runs
the finishing steps they return (their blocks' marks) in the same order once the hours' own marks are written.

Adding a grain to a kind of blocks: its entry's grains (each must divide the next), then a rebuild
(`manage.py rollup --since 30d`) so its blocks exist; readers skip a block until its marks say it is built, so the
deploy is safe before the rebuild. A new kind: an entry here (after its source), a model in probes.rollup_models and
its migration, a builder (a function of build.HourBuild, see RollupKind.builder; a closer too if it leaves blocks
over days to a range rebuild's closing pass), a pruner, and a tiler in probes.readings.plan that asks in_use();
build.py needs no edit.

Plain data (no Django at import): probes.rollups.periods imports it, and everything imports periods.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RollupKind:
    """One kind of rollup row."""

    name: str  # in --without and LATENCY_ROLLUPS_OFF: "region"
    model: str  # in probes.rollup_models: "RegionRollup"
    # Block lengths in hours, finest first, each dividing the next and aligned to periods.EPOCH.
    grains: tuple[int, ...]
    # What one row is keyed by besides its time (its unique constraint).
    keys: tuple[str, ...]
    time_column: str  # "hour", "day" or "start"
    # What its rows are merged from: "raw" (measurements) or another kind's name; a coarser grain of blocks is
    # merged from the grain before it.
    source: str
    # The mark models (MARKS) that must all vouch for a row before a reader uses it.
    marks: tuple[str, ...]
    # "module:function(job) -> finish or None" that (re)builds its rows over the hours of job (a
    # probes.rollups.build.HourBuild), called by probes.rollups.build._build in catalogue order in the transaction
    # that rebuilds those hours; finish, if any, is called in the same transaction once the hours' RollupHour marks
    # are written (the blocks' own marks, which may vouch only for hours marked then).
    builder: str
    # "module:function(old) -> rows deleted": the rows wholly before the rollup retention's cut.
    pruner: str
    # Which reads tile with it (for people; the tilers are in probes.readings.plan).
    reads: str
    # The base every other kind is merged from and every reader falls back to: it cannot be switched off.
    base: bool = False
    # "module:function(since, until, now, *, workers)", or "" for none: a range rebuild over several days
    # (build.rebuild_range) calls it once after every day is built, over their whole days; its builder may then
    # leave the blocks over days to it (HourBuild.closing), so that a block is merged once, not once a day.
    closer: str = ""

    def builder_function(self) -> Callable[..., Any]:
        return _resolve(self.builder)

    def closer_function(self) -> Callable[..., Any] | None:
        return _resolve(self.closer) if self.closer else None

    def pruner_function(self) -> Callable[..., Any]:
        return _resolve(self.pruner)


@dataclass(frozen=True)
class Mark:
    """A table that says which rollup rows are fresh (their protocol: probes.rollups.locks and build)."""

    name: str
    model: str
    says: str
    # "module:function(old) -> rows deleted", or "" for a table never pruned.
    pruner: str = ""

    def pruner_function(self) -> Callable[..., Any] | None:
        return _resolve(self.pruner) if self.pruner else None


def _resolve(path: str) -> Callable[..., Any]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


HOURLY = RollupKind(
    name="hourly",
    model="HourlyRollup",
    grains=(1,),
    keys=("probe_id", "region_id"),
    time_column="hour",
    source="raw",
    marks=("RollupHour",),
    # The hours' rows and, in the same statement, the region kind's 1 h blocks (build._hourly_sql).
    builder="probes.rollups.build:build_hours",
    pruner="probes.rollups.prune:prune_hourly",
    reads="every reading's marked hours not covered by a coarser row; partial hours up to their HourCut",
    base=True,
)
REGION = RollupKind(
    name="region",
    model="RegionRollup",
    grains=(1, 3, 12, 24, 168),
    keys=("region_id",),
    time_column="start",
    source="raw",
    marks=("RollupHour",),
    builder="probes.rollups.ladder:build",
    pruner="probes.rollups.ladder:prune_blocks",
    reads="every target grouped by region: read_window's overview and histograms, the time series of all targets",
)
SERIES_HOURS = RollupKind(
    name="series_hours",
    model="SeriesRollup",
    grains=(3, 12),
    keys=("probe_id", "region_id", "target_id"),
    time_column="start",
    source="hourly",
    marks=("RollupHour", "SeriesBlockMark"),
    builder="probes.rollups.hour_blocks:build",
    pruner="probes.rollups.series_blocks:prune_hour_blocks",
    reads="a window's marked hours outside its series_days blocks (loose complete days among them), and 3 h / 12 h "
    "buckets of named targets' time series",
)
SERIES_DAYS = RollupKind(
    name="series_days",
    model="SeriesRollup",
    grains=(48, 96, 192, 384),
    keys=("probe_id", "region_id", "target_id"),
    time_column="start",
    # The 2-day blocks merged from the 12 h blocks of series_hours, each coarser grain from the grain before it.
    source="series_hours",
    marks=("RollupHour", "SeriesBlockMark"),
    builder="probes.rollups.series_blocks:build",
    pruner="probes.rollups.series_blocks:prune_day_blocks",
    closer="probes.rollups.series_blocks:rebuild_series_range",
    reads="runs of complete days of a window read per probe or target (the table, one target)",
)
KINDS: tuple[RollupKind, ...] = (HOURLY, REGION, SERIES_HOURS, SERIES_DAYS)
BY_NAME = {kind.name: kind for kind in KINDS}
# The kinds a reading can do without (bench/dashboard.py --without, LATENCY_ROLLUPS_OFF).
SWITCHABLE = tuple(kind.name for kind in KINDS if not kind.base)

MARKS: tuple[Mark, ...] = (
    Mark(
        "RollupHour",
        "RollupHour",
        "every rollup row of this hour counts all its raw rows (removed by ingest when a late row lands)",
        pruner="probes.rollups.prune:prune_hour_marks",
    ),
    Mark(
        "HourCut",
        "HourCut",
        "this hour's hourly rows count its raw rows with an id up to the cut (an unmarked hour is read as "
        "those rows plus the raw rows above the cut)",
        pruner="probes.rollups.prune:prune_hour_cuts",
    ),
    Mark(
        "HourVersion",
        "HourVersion",
        "how many ingest transactions wrote into this hour: a rebuild marks the hour only if it did not move",
    ),
    Mark(
        "SeriesBlockMark",
        "SeriesBlockMark",
        "this series block is the merge of its hours' rollups as they are now (through its finer blocks)",
        # Pruned with its blocks (series_blocks.prune_day_blocks and prune_hour_blocks).
    ),
)


def in_use(name: str) -> bool:
    """Whether readers tile with this kind: all of them unless LATENCY_ROLLUPS_OFF names it (bench/dashboard.py
    --without measures what a kind is worth that way). Builders keep building every kind regardless, so turning
    one back on needs no rebuild."""
    from django.conf import settings

    return name not in getattr(settings, "LATENCY_ROLLUPS_OFF", ())
