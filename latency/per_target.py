"""Figures that keep targets apart: with several targets in view (the default is all), no chart pools them
unless the reader asks (pool=on). Two targets' calls merged into one distribution, heatmap cell or map colour
describe no service anyone can use: a fast self-hosted target beside slow hosted ones reads as a fast region.

Here: whether a selection keeps targets apart, the targets ranked for the map's default, and the map's rows for
one target or for the best target in each region. The numbers come from probes.readings, each target's from its
own rows and histograms.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field, replace
from datetime import datetime

from latency import aggregates
from probes import readings
from probes.metrics import BY_NAME
from probes.models import Target
from probes.readings.selection import Selection

BEST = "best"


def keeps_apart(f: Selection, cleaned: dict) -> bool:
    """Whether the figures keep targets apart: several targets in view (all of them when none is named) and
    the reader has not asked to pool them."""
    if cleaned.get("pool"):
        return False
    if f.target_ids:
        return len(f.target_ids) > 1
    return Target.objects.count() > 1


def _better(metric: str):
    """A sort key for values of `metric`, best first (None last)."""
    sign = -1 if BY_NAME[metric].higher_is_better else 1
    return lambda value: (value is None, sign * value if value is not None else 0)


def ranked_targets(f: Selection) -> list[dict]:
    """The targets with data in f's window, best first: by the median over the regions measuring each of its
    chosen percentile of f.metric there (each region one vote, so a target measured from one nearby region
    does not outrank one measured from everywhere by its sample count alone). Each {"id", "name", "value",
    "regions"}."""
    values: dict[int, list[float]] = {}
    names: dict[int, str] = {}
    for row in readings.table(f):
        if row["value"] is None:
            continue
        values.setdefault(row["target_id"], []).append(row["value"])
        names[row["target_id"]] = row["target"]
    key = _better(f.metric)
    ranked = [
        {"id": tid, "name": names[tid], "value": statistics.median(vals), "regions": len(vals)}
        for tid, vals in values.items()
    ]
    ranked.sort(key=lambda t: (*key(t["value"]), t["name"], t["id"]))
    return ranked


def map_target_json(target_id: int) -> dict | None:
    target = Target.objects.filter(id=target_id).first()
    if target is None:
        return None
    return {
        "id": target.id,
        "name": target.name,
        "location_name": target.location_name,
        "lat": target.latitude,
        "lon": target.longitude,
    }


@dataclass
class MapRows:
    """The map's regions for several targets kept apart: rows as readings.summary's, each naming its target
    (target, target_id; the best one per region when chosen is "best"), their health, the map's target (a
    star and paths: the one target shown, else None), what the map shows (a target id or "best") and the
    targets ranked."""

    rows: list[dict]
    health: dict
    target: dict | None
    chosen: int | str | None
    ranked: list[dict] = field(default_factory=list)


def _named(rows: list[dict], target: dict) -> list[dict]:
    return [{**row, "target": target["name"], "target_id": target["id"]} for row in rows]


def map_rows(f: Selection, choice: int | str | None, now: datetime) -> MapRows:
    """The map for one target (choice: its id; absent: the best-ranked, ranked_targets) or, choice "best",
    each region coloured by the best of the targets measured from it."""
    ranked = ranked_targets(f)
    scope = set(f.target_ids or Target.objects.values_list("id", flat=True))
    if choice == BEST:
        best: dict[int, dict] = {}
        health: dict = {}
        key = _better(f.metric)
        for target in ranked:
            rows, health_now = aggregates.region_summary(replace(f, target_ids=[target["id"]]), now)
            health.update(health_now)
            for row in _named(rows, target):
                row["best_target"] = True
                held = best.get(row["id"])
                if held is None or key(row["value"]) < key(held["value"]):
                    best[row["id"]] = row
        rows = sorted(best.values(), key=lambda row: (row["name"], row["slug"]))
        return MapRows(rows, health, None, BEST, ranked)
    target_id = choice if isinstance(choice, int) and choice in scope else (ranked[0]["id"] if ranked else None)
    if target_id is None:
        rows, health = aggregates.region_summary(f, now)
        return MapRows(rows, health, None, None, ranked)
    target = map_target_json(target_id)
    rows, health = aggregates.region_summary(replace(f, target_ids=[target_id]), now)
    named = _named(rows, target) if target else rows
    return MapRows(named, health, target, target_id, ranked)
