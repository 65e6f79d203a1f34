"""An objective over time: goodput per hour or day, and the burn-down of its budget (the objective's page reads
them; probes.readings.slos defines the figures and the rows)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from django.db import connection

from probes.readings.slos import (
    HOUR,
    ZERO,
    BurnDownPoint,
    Counts,
    GoodputRow,
    budget_of,
    ceil_day,
    ceil_hour,
    floor_day,
    floor_hour,
    mix_weights,
    tables,
    window_of,
)


def goodput(
    objective_id: int, since: datetime, until: datetime, bucket: Literal["hour", "day"] = "hour", by_region: bool = True
) -> list[GoodputRow]:
    """The objective's calls per hour or day (UTC) of [since, until) [x region], oldest first: hours from the hour
    counts (the current hour's row holds its calls so far); days from the day counts where whole, the hour counts
    at the edges (a day bucket carries no bad minutes). A bucket's hours are those of it inside [since, until), so
    goodput per hour of the first and the current bucket is not understated."""
    from probes.models import Region

    t = tables()
    region = "c.region_id" if by_region else "NULL::int"
    low = floor_hour(since)
    sums = "sum(c.good), sum(c.degraded), sum(c.bad), sum(c.missed), sum(c.excluded)"
    named = (
        "sum(c.good) AS good, sum(c.degraded) AS degraded, sum(c.bad) AS bad, sum(c.missed) AS missed, "
        "sum(c.excluded) AS excluded"
    )
    first, last = ceil_day(low), floor_day(until)
    with connection.cursor() as cur:
        if bucket == "day" and first < last:
            cur.execute(
                f"SELECT b, region_id, sum(good), sum(degraded), sum(bad), sum(missed), sum(excluded), 0 FROM ("
                f"SELECT c.day AS b, {region} AS region_id, {named} FROM {t['day_counts']} c "
                "WHERE c.objective_id = %s AND c.day >= %s AND c.day < %s GROUP BY 1, 2 UNION ALL "
                f"SELECT date_trunc('day', c.hour, 'UTC'), {region}, {sums} FROM {t['counts']} c "
                "WHERE c.objective_id = %s AND ((c.hour >= %s AND c.hour < %s) OR (c.hour >= %s AND c.hour < %s)) "
                "GROUP BY 1, 2) AS parts GROUP BY 1, 2 ORDER BY 1, 2",
                [objective_id, first, last, objective_id, low, first, last, until],
            )
        else:
            cur.execute(
                f"SELECT date_trunc(%s, c.hour, 'UTC') AS b, {region}, {sums}, "
                "sum(bit_count(c.bad_minutes::bit(64))) "
                f"FROM {t['counts']} c WHERE c.objective_id = %s AND c.hour >= %s AND c.hour < %s "
                "GROUP BY 1, 2 ORDER BY 1, 2",
                [bucket, objective_id, low, until],
            )
        fetched = cur.fetchall()
    slugs = dict(Region.objects.values_list("id", "slug"))
    length = timedelta(days=1) if bucket == "day" else HOUR
    return [
        GoodputRow(
            bucket=b.astimezone(UTC),
            region_id=region_id,
            region_slug=slugs.get(region_id, ""),
            counts=Counts(*(int(n) for n in numbers)),
            hours=max((min(b + length, until) - max(b, low)) / HOUR, 1 / 60),
        )
        for b, region_id, *numbers in fetched
    ]


def burn_down(objective_id: int, now: datetime | None = None) -> list[BurnDownPoint]:
    """The budget left (a share of the window's budget so far) after each hour of the objective's window: the
    burn-down chart. Its last point is the objective's remaining_ratio over the whole hours (the current hour
    counted so far). Weighted by the mix as the objective's figures are. Two statements: each region's totals over
    the window (its weight), then each hour's bad calls weighted, summed over the regions by PostgreSQL."""
    from probes.models import Region, ServiceLevelObjective

    now = now or datetime.now(UTC)
    o = ServiceLevelObjective.objects.filter(id=objective_id).first()
    if o is None or not o.counted_condition:
        return []
    objective = float(o.objective_percent) / 100.0
    since = ceil_hour(window_of(o.window, now)[0])
    totals = {
        region_id: Counts(good=good, bad=bad) for region_id, good, bad in _totals_by_region(objective_id, since, now)
    }
    weights = mix_weights(o.mix, dict(Region.objects.values_list("id", "slug"))) if o.mix else None
    final = budget_of(objective, totals, weights)
    if final.bad_share is None:
        return []
    # Each region's bad calls as a share of the final bad share: over its eligible calls (and weighted) with a
    # mix, over every eligible call without.
    if weights:
        present = {rid: w for rid, w in weights.items() if totals.get(rid, ZERO).eligible}
        weight = sum(present.values())
        scale = {rid: w / weight / totals[rid].eligible for rid, w in present.items()}
    else:
        scale = dict.fromkeys(totals, 1.0 / sum(totals.values(), ZERO).eligible)
    t = tables()
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT c.hour, sum(c.bad * w.scale) FROM {t['counts']} c "
            f"JOIN (VALUES {', '.join(['(%s::int, %s::float8)'] * len(scale))}) AS w(region_id, scale) "
            "ON w.region_id = c.region_id WHERE c.objective_id = %s AND c.hour >= %s AND c.hour < %s "
            "GROUP BY 1 ORDER BY 1",
            [*(v for item in scale.items() for v in item), objective_id, since, now],
        )
        spent_by_hour = cur.fetchall()
    points: list[BurnDownPoint] = []
    spent = 0.0
    for hour, spent_then in spent_by_hour:
        spent += spent_then
        points.append(BurnDownPoint(hour=hour.astimezone(UTC) + HOUR, remaining_ratio=1.0 - spent / (1.0 - objective)))
    return points


def _totals_by_region(objective_id: int, since: datetime, until: datetime) -> list[tuple[int, int, int]]:
    """(region_id, good, bad) of the objective's calls in the hours [since, until): whole days from the day counts,
    the hours at either edge from the hour counts (the current hour's row holds its calls so far)."""
    first, last = ceil_day(since), floor_day(until)
    if first >= last:
        first = last = since  # no whole day: every hour from the hour counts
    t = tables()
    with connection.cursor() as cur:
        cur.execute(
            "SELECT region_id, sum(good), sum(bad) FROM ("
            f"SELECT region_id, good, bad FROM {t['day_counts']} WHERE objective_id = %s AND day >= %s AND day < %s "
            f"UNION ALL SELECT region_id, good, bad FROM {t['counts']} WHERE objective_id = %s "
            "AND hour >= %s AND hour < %s AND NOT (hour >= %s AND hour < %s)) AS parts GROUP BY 1",
            [objective_id, first, last, objective_id, since, until, first, last],
        )
        return [(region_id, int(good), int(bad)) for region_id, good, bad in cur.fetchall()]
