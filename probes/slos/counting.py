"""Counting objectives as rows are stored: the SQL ingest (probes.ingest) and the missed-run pass
(probes.fleet.missed) add to their own statements, and the lock that keeps them exact against a rebuild.

Which objectives count a call: enabled ones covering its target and region (probes.slos.classify.covers_sql) whose
counts are current (counted_condition set: an objective waiting for its rebuild is skipped, the rebuild counts
those calls). Against a rebuild (probes.slos.rebuild): every writer first takes FOR KEY SHARE on every objective
row (lock_objectives), before it draws ids or reads the objectives; a rebuild's last step takes FOR UPDATE, so it
waits for writers in flight (their rows are then visible to it, and they skipped the objective) and writers after
it see the objective current. FOR KEY SHARE does not conflict with an ordinary UPDATE of the row: saving an
objective in the admin never waits for ingest.
"""

from __future__ import annotations

from django.db import connection

from probes.slos.classify import (
    add_counts_ctes,
    call_class_sql,
    covering_sql,
    covers_sql,
    in_silence_sql,
    missed_class_sql,
)

CURRENT = "o.enabled AND o.counted_condition <> ''"
# The minute of the hour a call's slot falls in: its bit in the hour's bad-minute mask (SLOHourCount.bad_minutes).
MINUTE = "extract(minute FROM {0}.scheduled_for)::int AS minute"


def lock_objectives(cur=None) -> bool:
    """FOR KEY SHARE on every objective, until commit. True when any is enabled (else nothing needs counting)."""
    from probes.models import ServiceLevelObjective

    sql = f"SELECT enabled FROM {ServiceLevelObjective._meta.db_table} ORDER BY id FOR KEY SHARE"
    if cur is None:
        with connection.cursor() as own:
            own.execute(sql)
            rows = own.fetchall()
    else:
        cur.execute(sql)
        rows = cur.fetchall()
    return any(enabled for (enabled,) in rows)


def classified_calls_sql(source: str, which: str = CURRENT, pairs: str | None = None, *, few: bool = False) -> str:
    """(objective_id, target_id, region_id, hour, minute, cls, n) for each call of `source` (a CTE, table or
    subquery with target_id, region_id, scheduled_for and the classifier's columns) and each objective `which` (a
    condition on alias o) covering it. Coverage is decided once per target x region pair of `pairs` (by default
    the pairs in `source`), not per call. few: `source` is a batch small enough to hold in memory (ingest's
    stored rows), and each call's silence is judged once, not once per objective covering it; a rebuild's source
    is every raw row kept and streams instead."""
    from probes.models import ServiceLevelObjective

    objectives = ServiceLevelObjective._meta.db_table
    pairs = pairs or f"(SELECT DISTINCT target_id, region_id FROM {source})"
    # MATERIALIZED: inlined, the planner joins the calls to the objectives first, and then judges each objective's
    # regions once per call x objective (and, for `few`, each call's silences once per objective covering it).
    # `source` comes first in the text: its parameters come before `which`'s.
    return (
        f"(WITH s AS {'MATERIALIZED ' if few else ''}(SELECT x.*, {in_silence_sql('x')} AS in_silence "
        f"FROM {source} x), "
        # Each covered pair with its objective's row, so the calls join one small table.
        f"o AS MATERIALIZED (SELECT cv.target_id AS covered_target_id, cv.region_id AS covered_region_id, ob.* "
        f"FROM ({covering_sql(pairs, which)}) cv JOIN {objectives} ob ON ob.id = cv.objective_id) "
        f"SELECT o.id AS objective_id, s.target_id, s.region_id, date_trunc('hour', s.scheduled_for) AS hour, "
        f"{MINUTE.format('s')}, {call_class_sql('s', 'o', 's.in_silence')} AS cls, 1 AS n "
        "FROM s JOIN o ON o.covered_target_id = s.target_id AND o.covered_region_id = s.region_id)"
    )


def replaced_missed_sql(source: str, which: str = CURRENT) -> str:
    """The same shape as classified_calls_sql, taking back (n = -1) the missed run of each slot `source` stores
    late: a measurement that arrives for a slot closed as missed wins, as it does on every other page."""
    from probes.models import MissedRun, ServiceLevelObjective

    objectives, missed = ServiceLevelObjective._meta.db_table, MissedRun._meta.db_table
    return (
        f"(SELECT o.id AS objective_id, mr.target_id, mr.region_id, date_trunc('hour', mr.scheduled_for) AS hour, "
        f"{MINUTE.format('mr')}, {missed_class_sql('mr', 'o')} AS cls, -1 AS n "
        f"FROM {source} s JOIN {missed} mr ON mr.probe_id = s.probe_id AND mr.region_id = s.region_id "
        "AND mr.scheduled_for = s.scheduled_for "
        f"JOIN {objectives} o ON {which} AND {covers_sql('o', 'mr.target_id', 'mr.region_id')})"
    )


def ingest_counts_ctes(stored: str) -> str:
    """Entries for ingest's WITH list (add_counts_ctes: hour and day counts): add the rows its INSERT … RETURNING
    stored (`stored`: probe_id, target_id, region_id, scheduled_for, outcome, ttft_ms, total_ms, output_tokens)
    to every current objective covering them. Only the rows the insert-or-ignore stored: a redelivered slot is
    counted once."""
    return add_counts_ctes(
        f"SELECT * FROM ({classified_calls_sql(stored, few=True)} UNION ALL {replaced_missed_sql(stored)}) "
        "AS classified",
        "slo_counted",
    )


def missed_calls_sql(recorded: str, which: str = CURRENT) -> str:
    """The missed runs `recorded` (a CTE or subquery: target_id, region_id, scheduled_for), classified for every
    objective `which` (by default every current one) covering them: bad and missed, or excluded in a silence the
    objective excludes. A SELECT in classified_calls_sql's shape."""
    from probes.models import ServiceLevelObjective

    objectives = ServiceLevelObjective._meta.db_table
    return (
        f"SELECT o.id AS objective_id, m.target_id, m.region_id, date_trunc('hour', m.scheduled_for) AS hour, "
        f"{MINUTE.format('m')}, {missed_class_sql('m', 'o')} AS cls, 1 AS n "
        f"FROM {recorded} m JOIN {objectives} o ON {which} AND {covers_sql('o', 'm.target_id', 'm.region_id')}"
    )


def missed_counts_ctes(recorded: str) -> str:
    """Entries for the missed-run pass's WITH list: its missed runs added to the hour and day counts of every
    current objective covering them."""
    return add_counts_ctes(missed_calls_sql(recorded), "slo_counted")
