"""The one classifier of a call for an objective, as SQL: ingest's counting, the rebuild and (later) short-window
reads all use these expressions, so a call cannot be good in one and bad in another.

The thresholds are never formatted into the SQL nor bound one objective at a time: the expressions read them from
the objective's row (alias `o`), so one statement classifies a batch for every objective it covers.

A call's class, first match wins:
- excluded: the objective excludes silences and the call's slot (scheduled_for) lies in a silence of its target,
  or it excludes rate-limited calls and the provider refused the call for capacity (an outcome of REFUSED: its
  rate limits or its load); an objective that does not exclude them counts such a call bad, as any failed call;
- good: outcome ok, ttft_ms <= the TTFT threshold, and when set, tpot <= the TPOT threshold and total_ms <= the
  total threshold (a threshold exactly met is good); degraded when also ttft_ms > the degraded threshold;
- bad: everything else, a NULL where a threshold needs a value included.

TPOT is (total_ms - ttft_ms) / (output_tokens - 1), the time per output token after the first. A call with at most
one output token (or no count, or no total) has no TPOT and fails a TPOT condition: the promise cannot be shown
kept, and an objective with a TPOT threshold is about streaming answers, which a one-token answer did not give.

The slot (scheduled_for), not started_at, places a call in its hour and in a silence: a missed run has only its
slot, so measured and missed calls are placed alike, and the hour of a late measurement replacing a missed run
is the missed run's hour. Days are partitioned by slot too, so a rebuild's scan by slot prunes partitions.
"""

from __future__ import annotations

from probes.engine.result import REFUSED

GOOD, DEGRADED, BAD, MISSED, EXCLUDED = "good", "degraded", "bad", "missed", "excluded"


def _tables() -> dict[str, str]:
    from probes.models import (
        ModelGroup,
        Region,
        ServiceLevelObjective,
        Silence,
        SLODayCount,
        SLOFiveMinuteCount,
        SLOHourCount,
    )

    targets = ServiceLevelObjective._meta.get_field("targets")
    regions = ServiceLevelObjective._meta.get_field("regions")
    group_targets = ModelGroup._meta.get_field("targets")
    return {
        "objective": ServiceLevelObjective._meta.db_table,
        "counts": SLOHourCount._meta.db_table,
        "day_counts": SLODayCount._meta.db_table,
        "five_counts": SLOFiveMinuteCount._meta.db_table,
        "silence": Silence._meta.db_table,
        "region": Region._meta.db_table,
        "obj_targets": targets.m2m_db_table(),
        "obj_targets_obj": targets.m2m_column_name(),
        "obj_targets_target": targets.m2m_reverse_name(),
        "obj_regions": regions.m2m_db_table(),
        "obj_regions_obj": regions.m2m_column_name(),
        "obj_regions_region": regions.m2m_reverse_name(),
        "group_targets": group_targets.m2m_db_table(),
        "group_targets_group": group_targets.m2m_column_name(),
        "group_targets_target": group_targets.m2m_reverse_name(),
    }


def silenced_sql(m: str, o: str) -> str:
    """True when objective `o` excludes silences and the slot of row `m` (target_id, scheduled_for) is in one."""
    t = _tables()
    return (
        f"({o}.exclude_silences AND EXISTS (SELECT 1 FROM {t['silence']} si WHERE si.target_id = {m}.target_id "
        f"AND si.starts_at <= {m}.scheduled_for AND {m}.scheduled_for < si.ends_at))"
    )


def in_silence_sql(m: str) -> str:
    """True when the slot of row `m` (target_id, scheduled_for) is in a silence of its target, whatever the
    objective: computed once per call and passed to call_class_sql as in_silence, where a call is classified for
    several objectives."""
    t = _tables()
    return (
        f"EXISTS (SELECT 1 FROM {t['silence']} si WHERE si.target_id = {m}.target_id "
        f"AND si.starts_at <= {m}.scheduled_for AND {m}.scheduled_for < si.ends_at)"
    )


def refused_sql(m: str, o: str) -> str:
    """True when objective `o` excludes rate-limited calls and row `m` is a call the provider refused for capacity
    (probes.engine.result.REFUSED). A missed run has no outcome and is never one."""
    refused = ", ".join(f"'{outcome}'" for outcome in REFUSED)
    return f"({o}.exclude_rate_limited AND {m}.outcome IN ({refused}))"


def call_class_sql(m: str, o: str, in_silence: str | None = None) -> str:
    """The class of measurement row `m` (target_id, scheduled_for, outcome, ttft_ms, total_ms, output_tokens) for
    objective row `o`: one of GOOD, DEGRADED, BAD, EXCLUDED. in_silence: a boolean column of m computed by
    in_silence_sql, when the caller has it."""
    tpot = f"({m}.total_ms - {m}.ttft_ms) / ({m}.output_tokens - 1)"
    good = (
        f"{m}.outcome = 'ok' AND {m}.ttft_ms <= {o}.ttft_threshold_ms "
        f"AND ({o}.tpot_threshold_ms IS NULL OR ({m}.output_tokens > 1 AND {tpot} <= {o}.tpot_threshold_ms)) "
        f"AND ({o}.total_threshold_ms IS NULL OR {m}.total_ms <= {o}.total_threshold_ms)"
    )
    silenced = silenced_sql(m, o) if in_silence is None else f"({o}.exclude_silences AND {in_silence})"
    return (
        f"CASE WHEN {silenced} THEN '{EXCLUDED}' "
        f"WHEN {refused_sql(m, o)} THEN '{EXCLUDED}' "
        f"WHEN {good} THEN CASE WHEN {m}.ttft_ms > {o}.degraded_ttft_threshold_ms THEN '{DEGRADED}' ELSE '{GOOD}' END "
        f"ELSE '{BAD}' END"
    )


def missed_class_sql(m: str, o: str) -> str:
    """The class of missed run `m` (target_id, scheduled_for): MISSED (bad), or EXCLUDED inside a silence the
    objective excludes, like any call of that slot."""
    return f"CASE WHEN {silenced_sql(m, o)} THEN '{EXCLUDED}' ELSE '{MISSED}' END"


def region_covered_sql(o: str, region: str) -> str:
    """True when objective `o` counts calls from region id `region`: one of its regions, or without regions a key
    of its mix, or without either any region."""
    t = _tables()
    return (
        f"CASE WHEN EXISTS (SELECT 1 FROM {t['obj_regions']} orr WHERE orr.{t['obj_regions_obj']} = {o}.id) "
        f"THEN EXISTS (SELECT 1 FROM {t['obj_regions']} orr WHERE orr.{t['obj_regions_obj']} = {o}.id "
        f"AND orr.{t['obj_regions_region']} = {region}) "
        f"WHEN {o}.mix <> '{{}}'::jsonb "
        f"THEN jsonb_exists({o}.mix, (SELECT rg.slug FROM {t['region']} rg WHERE rg.id = {region})) "
        "ELSE true END"
    )


def covers_sql(o: str, target: str, region: str) -> str:
    """True when objective `o` covers calls to target id `target` from region id `region`: the target is one of
    its targets or of its model group's, and region_covered_sql."""
    t = _tables()
    return (
        f"(EXISTS (SELECT 1 FROM {t['obj_targets']} ot WHERE ot.{t['obj_targets_obj']} = {o}.id "
        f"AND ot.{t['obj_targets_target']} = {target}) "
        f"OR EXISTS (SELECT 1 FROM {t['group_targets']} gt WHERE gt.{t['group_targets_group']} = {o}.model_group_id "
        f"AND gt.{t['group_targets_target']} = {target})) "
        f"AND {region_covered_sql(o, region)}"
    )


def covering_sql(pairs: str, which: str) -> str:
    """(objective_id, target_id, region_id): each pair of `pairs` (a CTE or subquery of target_id, region_id) with
    each objective `which` (a condition on alias o) that covers it, as covers_sql decides, but set-based: the pairs
    are joined to the objectives through their targets first (one hash of every objective's targets and group
    targets a statement), so the region condition is judged only for the objectives of a pair's target, not for
    every pair x objective (ingest's counting cost per batch)."""
    t = _tables()
    targets = (
        f"SELECT ot.{t['obj_targets_obj']} AS objective_id, ot.{t['obj_targets_target']} AS target_id "
        f"FROM {t['obj_targets']} ot UNION SELECT og.id, gt.{t['group_targets_target']} FROM {t['objective']} og "
        f"JOIN {t['group_targets']} gt ON gt.{t['group_targets_group']} = og.model_group_id"
    )
    return (
        f"SELECT o.id AS objective_id, p.target_id, p.region_id FROM {pairs} p "
        f"JOIN ({targets}) ct ON ct.target_id = p.target_id "
        f"JOIN {t['objective']} o ON o.id = ct.objective_id AND {which} AND {region_covered_sql('o', 'p.region_id')}"
    )


def class_sums(cls: str = "cls", n: str = "n") -> list[str]:
    """good (degraded included), degraded, bad (missed included), missed and excluded: the sums of n (1 a call,
    -1 a take-back) by class cls, in CLASS_COLUMNS' order. Writers and readers sum with these alike."""
    return [
        f"coalesce(sum({n}) FILTER (WHERE {cls} IN ('{GOOD}', '{DEGRADED}')), 0)",
        f"coalesce(sum({n}) FILTER (WHERE {cls} = '{DEGRADED}'), 0)",
        f"coalesce(sum({n}) FILTER (WHERE {cls} IN ('{BAD}', '{MISSED}')), 0)",
        f"coalesce(sum({n}) FILTER (WHERE {cls} = '{MISSED}'), 0)",
        f"coalesce(sum({n}) FILTER (WHERE {cls} = '{EXCLUDED}'), 0)",
    ]


CLASS_COLUMNS = ("good", "degraded", "bad", "missed", "excluded")


def _upsert_sql(table: str, keys: tuple[tuple[str, str], ...], source: str, where: str = "", mask: bool = False) -> str:
    """An INSERT adding `source`'s classified calls to a count table, keyed by keys ((column, the expression of
    source's columns giving it), in the table's unique key order), upserted in that order, so two writers lock
    count rows in the same order. mask: the hour counts' bad_minutes, a bad call setting its minute's bit."""
    columns = [column for column, _ in keys] + list(CLASS_COLUMNS)
    selected = [expression for _, expression in keys] + class_sums()
    updates = [f"{c} = c.{c} + EXCLUDED.{c}" for c in CLASS_COLUMNS]
    if mask:
        columns.append("bad_minutes")
        selected.append(
            f"coalesce(bit_or(1::bigint << minute) FILTER (WHERE cls IN ('{BAD}', '{MISSED}') AND n > 0), 0)"
        )
        updates.append("bad_minutes = c.bad_minutes | EXCLUDED.bad_minutes")
    order = ", ".join(str(i + 1) for i in range(len(keys)))
    return (
        f"INSERT INTO {table} AS c ({', '.join(columns)}) SELECT {', '.join(selected)} FROM {source} {where} "
        f"GROUP BY {order} ORDER BY {order} "
        f"ON CONFLICT ({', '.join(column for column, _ in keys)}) DO UPDATE SET {', '.join(updates)}"
    )


def add_counts_sql(source: str) -> str:
    """An INSERT adding `source`'s classified calls to the hour counts. `source` (a CTE or subquery) has
    objective_id, target_id, region_id, hour, minute (of the hour), cls and n (1 to count a call, -1 to take one
    back: a missed run that a late measurement replaced). A take-back does not clear its minute's bad bit (the
    minute may hold other bad calls), so a minute whose only bad call was a missed run replaced late stays bad until
    a rebuild, which counts only the missed runs left."""
    keys = (("objective_id", "objective_id"), ("target_id", "target_id"), ("region_id", "region_id"), ("hour", "hour"))
    return _upsert_sql(_tables()["counts"], keys, source, mask=True)


def add_day_counts_sql(source: str) -> str:
    """add_counts_sql's INSERT for the day counts (SLODayCount): the same sums per UTC day, without the mask."""
    day = ("day", "date_trunc('day', hour, 'UTC')")
    keys = (("objective_id", "objective_id"), ("target_id", "target_id"), ("region_id", "region_id"), day)
    return _upsert_sql(_tables()["day_counts"], keys, source)


# Hours of five-minute counts written back from the current hour (SLOFiveMinuteCount): the 6-hour burn window's
# start and a margin for a counter running late. Readers use them for spans inside FIVE_MINUTES_READ_HOURS
# of now (probes.readings.slo_time).
FIVE_MINUTES_KEPT_HOURS = 8


def add_five_minute_counts_sql(source: str) -> str:
    """add_counts_sql's INSERT for the five-minute counts (SLOFiveMinuteCount): the same sums per five minutes, for
    the calls of the last FIVE_MINUTES_KEPT_HOURS hours only. `source` also has `five` (minute // 5)."""
    start = ("start", "hour + five * interval '5 minutes'")
    keys = (("objective_id", "objective_id"), start, ("target_id", "target_id"), ("region_id", "region_id"))
    recent = f"WHERE hour >= date_trunc('hour', now()) - interval '{FIVE_MINUTES_KEPT_HOURS} hours'"
    return _upsert_sql(_tables()["five_counts"], keys, source, where=recent)


def summed_sql(source: str) -> str:
    """`source`'s classified calls summed per key, five minutes and class (a bad call's minute kept), what the
    upserts read: a batch's calls are mostly good ones of a few hours, so tens of thousands of classified calls
    become a few thousand rows to sort. Kept apart by sign, so a take-back never cancels the bit of a bad call in
    its minute."""
    return (
        "SELECT objective_id, target_id, region_id, hour, minute / 5 AS five, "
        f"CASE WHEN cls IN ('{BAD}', '{MISSED}') THEN minute END AS minute, cls, sum(n)::int AS n "
        f"FROM ({source}) AS src GROUP BY 1, 2, 3, 4, 5, 6, 7, n > 0"
    )


def add_counts_ctes(source: str, name: str, *, days: bool = True) -> str:
    """Entries for a statement's WITH list adding `source`'s classified calls to the hour, the day (unless days is
    False: a rebuild writes its days from its hours at the end) and the five-minute counts: `{name}` (the
    classified calls, summed once), `{name}_hours` (RETURNING the hour rows' missed), `{name}_days` and
    `{name}_fives`. Every upsert locks its rows in key order, hours, then days, then five minutes, in every
    writer's statement."""
    return (
        f"{name} AS MATERIALIZED ({summed_sql(source)}), "
        f"{name}_hours AS ({add_counts_sql(name)} RETURNING missed), "
        + (f"{name}_days AS ({add_day_counts_sql(name)}), " if days else "")
        + f"{name}_fives AS ({add_five_minute_counts_sql(name)})"
    )


def days_from_hours_sql() -> str:
    """Replaces one objective's (%s) day counts by the sums of its hour counts: a rebuild's last step, under the
    objective's lock, so the days need not be upserted for every batch of a long recount."""
    t = _tables()
    return (
        f"WITH gone AS (DELETE FROM {t['day_counts']} WHERE objective_id = %(objective)s) "
        f"INSERT INTO {t['day_counts']} (objective_id, target_id, region_id, day, good, degraded, bad, missed, "
        "excluded) SELECT objective_id, target_id, region_id, date_trunc('day', hour, 'UTC'), sum(good), "
        f"sum(degraded), sum(bad), sum(missed), sum(excluded) FROM {t['counts']} WHERE objective_id = %(objective)s "
        "GROUP BY 1, 2, 3, 4"
    )
