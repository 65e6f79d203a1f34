"""The slot-time bounds every read of raw measurements adds to its started_at bounds, in each form a reader writes
its SQL in (a Django Q, named parameters, psycopg literals): the one place they are computed.

Raw measurements are partitioned by day of scheduled_for (the slot) while readers select by started_at, which
PostgreSQL cannot prune partitions by. probes.slot_time's rule (held by the CHECK constraint
measurement_started_near_slot) bounds a row's slot by its start, so a started_at bound implies a scheduled_for
bound: adding it selects exactly the same rows, from the partitions of the days the slot range overlaps only.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.models import Q
from psycopg import sql

from probes.models import MAX_INTERVAL_S
from probes.slot_time import SLOT_LATE, slot_bounds

# Reads of the newest rows without a window (latest_results, recent) look this far back first, in the few
# partitions of those days, and in older ones only for what they did not find there: a statement over every day's
# partition costs their planning and one index descent in each (tens of ms at 60 days). This far back, every pair
# of a probe still running has a row, whatever its interval (at most MAX_INTERVAL_S, started at most SLOT_LATE late).
RECENT_FIRST = timedelta(seconds=MAX_INTERVAL_S) + SLOT_LATE
# recent's second step back, before the rest: failures are rare, a target's last 50 often days old.
RECENT_THEN = timedelta(days=8)


def slot_floor(since: datetime) -> datetime:
    """The lowest scheduled_for of a row with started_at >= since."""
    return slot_bounds(since, since)[0]


def slot_ceiling(until: datetime) -> datetime:
    """The bound with scheduled_for < it for every row with started_at < until, and scheduled_for <= it for
    every row with started_at <= until."""
    return slot_bounds(until, until)[1]


def started_in(since: datetime, until: datetime) -> Q:
    """started_at in [since, until), with its slot bounds."""
    low, high = slot_bounds(since, until)
    return Q(started_at__gte=since, started_at__lt=until, scheduled_for__gte=low, scheduled_for__lt=high)


def started_q(*, since: datetime | None = None, until: datetime | None = None) -> Q:
    """started_at >= since and/or < until, each with its slot bound."""
    if since is None and until is None:
        raise ValueError("a started_at bound needs since or until")
    q = Q()
    if since is not None:
        q &= Q(started_at__gte=since, scheduled_for__gte=slot_floor(since))
    if until is not None:
        q &= Q(started_at__lt=until, scheduled_for__lt=slot_ceiling(until))
    return q


def started_up_to(until: datetime) -> Q:
    """The slot bound of started_at <= until (a key-paged read's cursor bounds its own started_at)."""
    return Q(scheduled_for__lte=slot_ceiling(until))


def started_params(
    params: dict[str, Any],
    prefix: str,
    alias: str = "",
    *,
    since: datetime | None = None,
    until: datetime | None = None,
) -> str:
    """started_at >= since and/or < until, each with its slot bound, over named parameters prefix..., added to
    params."""
    col = f"{alias}." if alias else ""
    conds = []
    if since is not None:
        params[f"{prefix}a"], params[f"{prefix}lo"] = since, slot_floor(since)
        conds += [f"{col}started_at >= %({prefix}a)s", f"{col}scheduled_for >= %({prefix}lo)s"]
    if until is not None:
        params[f"{prefix}b"], params[f"{prefix}hi"] = until, slot_ceiling(until)
        conds += [f"{col}started_at < %({prefix}b)s", f"{col}scheduled_for < %({prefix}hi)s"]
    if not conds:
        raise ValueError("a started_at bound needs since or until")
    return "(" + " AND ".join(conds) + ")"


def newest_first(now: datetime) -> list[dict[str, datetime]]:
    """The started_at bounds (since=, until=) a read of the newest rows walks back through, newest first, each
    disjoint from the others and together all of time: every row of one is newer than every row of the next."""
    first, then = now - RECENT_FIRST, now - RECENT_THEN
    return [{"since": first}, {"since": then, "until": first}, {"until": then}]


def slot_lookups(lookups: dict[str, Any]) -> dict[str, list[datetime]]:
    """The scheduled_for lookups implied by the started_at__gte / started_at__lt lookups of an admin changelist
    (its date hierarchy and date filter: datetimes, or the ISO strings of a URL; a value or a list of them). A
    value that is no time adds no bound: the changelist reports it as it would without this."""
    out: dict[str, list[datetime]] = {}
    for lookup, slot_lookup, bound in (
        ("started_at__gte", "scheduled_for__gte", slot_floor),
        ("started_at__lt", "scheduled_for__lt", slot_ceiling),
    ):
        values = lookups.get(lookup)
        values = values if isinstance(values, list) else [values]
        if len(values) != 1:
            continue
        when = values[0]
        if isinstance(when, str):
            try:
                when = datetime.fromisoformat(when)
            except ValueError:
                continue
        if isinstance(when, datetime):
            out[slot_lookup] = [bound(when if when.tzinfo else when.replace(tzinfo=UTC))]
    return out


def started_in_params(intervals: Iterable[tuple], params: dict[str, Any], prefix: str, alias: str = "") -> str:
    """(started_at in [a, b) and its slot range, or ...) over named parameters prefix<i>..., added to params.
    An interval (a, b, cut) holds only the rows with an id above cut: a partial hour's tail
    (probes.readings.plan.Coverage.tails).

    Each interval carries its own slot range, so a reading of a window's two edges (its middle from rollups)
    prunes to the edges' days, not to every day between them."""
    parts = []
    for i, (a, b, *cut) in enumerate(intervals):
        part = started_params(params, f"{prefix}{i}", alias, since=a, until=b)
        if cut:
            params[f"{prefix}{i}cut"] = cut[0]
            part = f"({part} AND {alias + '.' if alias else ''}id > %({prefix}{i}cut)s)"
        parts.append(part)
    return "(" + " OR ".join(parts) + ")" if parts else "FALSE"


def started_in_literals(since: datetime, until: datetime, alias: str) -> list[sql.Composable]:
    """The conditions of started_at in [since, until) and its slot range as literals (for COPY, which takes no
    parameters), over table alias `alias`."""
    a = sql.Identifier(alias)
    low, high = slot_bounds(since, until)
    return [
        sql.SQL("{}.started_at >= {}").format(a, sql.Literal(since)),
        sql.SQL("{}.started_at < {}").format(a, sql.Literal(until)),
        sql.SQL("{}.scheduled_for >= {}").format(a, sql.Literal(low)),
        sql.SQL("{}.scheduled_for < {}").format(a, sql.Literal(high)),
    ]
