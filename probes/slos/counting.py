"""Counting objectives: the counter that adds stored measurements to the hour and day counts behind ingest
(count_pending), the SQL the missed-run pass (probes.fleet.missed) adds to its own statement, and the locks that
keep the counts exact against a rebuild.

Behind ingest: ingest stores rows and nothing else; count_pending classifies every row above the counting position
(SLOCounted.through) up to a cut (probes.rollups.locks.take_cut: every row at or below it committed) for every
current objective in one statement, and moves the position to the cut, in one transaction. However many batches
arrived meanwhile, each count row is upserted once, where a batch's own statement upserted nearly a row per call.
Ingest runs it after storing (at most every INGEST_COUNT_EVERY_S in a process, never waiting for another counter
or an ingest in flight), the central beat on its schedule (probes.slos.count_calls, settings.CELERY_BEAT_SCHEDULE);
readers classify the rows above the position themselves, in the same snapshot as the counts
(probes.readings.slos), so a reading is exact however far behind the counter is.

Which objectives count a call: enabled ones covering its target and region (probes.slos.classify.covers_sql) whose
counts are current (counted_condition set: an objective waiting for its rebuild is skipped, the rebuild counts
those calls). Against a rebuild (probes.slos.rebuild) and a save (probes.slos.services): every writer first takes
FOR KEY SHARE on every objective row (lock_objectives) before it reads them; a rebuild's last step takes FOR UPDATE
on the objective, so it waits for writers in flight, and it holds the counting position's row lock, so the counter
waits for it: the rebuild counts up to the position, the counter from it. FOR KEY SHARE does not conflict with an
ordinary UPDATE of the row: saving an objective in the admin never waits for the counter.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

from django.db import DatabaseError, connection, transaction

from probes.slos.classify import (
    FIVE_MINUTES_KEPT_HOURS,
    add_counts_ctes,
    add_five_minute_counts_sql,
    call_class_sql,
    covering_sql,
    covers_sql,
    in_silence_sql,
    missed_class_sql,
    summed_sql,
)

log = logging.getLogger(__name__)

# The classifier's columns of a measurement: what counting reads of each row.
MEASURED = "probe_id, target_id, region_id, scheduled_for, outcome, ttft_ms, total_ms, output_tokens"
CURRENT = "o.enabled AND o.counted_condition <> ''"
# The minute of the hour a call's slot falls in: its bit in the hour's bad-minute mask (SLOHourCount.bad_minutes).
MINUTE = "extract(minute FROM {0}.scheduled_for)::int AS minute"


def lock_objectives(cur: Any = None) -> bool:
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


# The measurements one counting statement classifies at most (by id): a backlog (a bulk load, a counter stopped
# for hours) is counted in several transactions, none holding the position's lock for long.
MAX_IDS_PER_PASS = 1_000_000
# Below this many rows the batch is materialised and each call's silence judged once (classified_calls_sql's few).
FEW_ROWS = 200_000
# Ingest counts what it stored at most this often per process: under a burst, the rows of many batches are
# counted in one statement.
INGEST_COUNT_EVERY_S = 2.0
# When this process's ingest last counted (time.monotonic()).
_ingest_counted = {"at": float("-inf")}


def counted_sql() -> str:
    """The counting position (SLOCounted.through) as a scalar subquery: 0 when the row is missing (every stored row
    is then uncounted, as it is when the counts were emptied with it)."""
    from probes.models import SLOCounted

    return f"coalesce((SELECT through FROM {SLOCounted._meta.db_table} WHERE id = {SLOCounted.SINGLETON}), 0)"


def lock_counted(cur: Any, *, wait: bool = True) -> int | None:
    """Lock the counting position's row until commit (made when missing) and return it; None when another
    transaction holds it and wait is False."""
    from probes.models import SLOCounted

    table = SLOCounted._meta.db_table
    cur.execute(f"INSERT INTO {table} (id, through) VALUES (%s, 0) ON CONFLICT (id) DO NOTHING", [SLOCounted.SINGLETON])
    cur.execute(
        f"SELECT through FROM {table} WHERE id = %s FOR UPDATE{'' if wait else ' SKIP LOCKED'}",
        [SLOCounted.SINGLETON],
    )
    row = cur.fetchone()
    return None if row is None else int(row[0])


def count_pending(*, wait: bool = True) -> int:
    """Count every stored measurement above the counting position for every current objective, up to the
    latest cut, and move the position there. Without wait, return at once when another counter holds the
    position or an ingest is in flight. Returns the measurements counted (those the id range held)."""
    from probes.models import Measurement, SLOCounted
    from probes.rollups.locks import take_cut, try_take_cut

    measured = Measurement._meta.db_table
    total = 0
    while True:
        with transaction.atomic(), connection.cursor() as cur:
            low = lock_counted(cur, wait=wait)
            if low is None:
                return total
            # Without wait, not even for the ingests in flight: one may be held open by a caller waiting for this.
            latest = take_cut() if wait else try_take_cut()
            if latest is None:
                return total
            cut = min(latest, low + MAX_IDS_PER_PASS)
            if cut <= low:
                return total
            if lock_objectives(cur):
                # The classified calls (several per row) are summed before the upserts: in memory, not in sorted
                # runs spilled to disk (the default work_mem holds a small burst's).
                cur.execute("SET LOCAL work_mem = '64MB'")
                batch = f"SELECT id, {MEASURED} FROM {measured} WHERE id > %s AND id <= %s"
                classified = (
                    f"SELECT * FROM ({classified_calls_sql('slo_batch', few=cut - low <= FEW_ROWS)} "
                    "UNION ALL " + replaced_missed_sql("slo_batch") + ") AS classified"
                )
                cur.execute(
                    f"WITH slo_batch AS MATERIALIZED ({batch}), {add_counts_ctes(classified, 'slo_counted')} "
                    "SELECT count(*) FROM slo_batch",
                    [low, cut],
                )
                total += cur.fetchone()[0]
            prune_five_minutes(cur)
            cur.execute(
                f"UPDATE {SLOCounted._meta.db_table} SET through = %s, counted_at = %s WHERE id = %s",
                [cut, datetime.now(UTC), SLOCounted.SINGLETON],
            )
        if cut < low + MAX_IDS_PER_PASS:
            return total


def count_after_ingest() -> None:
    """Ingest's call once its rows are committed: count_pending at most every INGEST_COUNT_EVERY_S in this
    process, without waiting for another counter (what it leaves, the next call or the beat counts). A failure
    is logged, not raised: the rows are stored, and readers count them until the counter does."""
    now = time.monotonic()
    if now - _ingest_counted["at"] < INGEST_COUNT_EVERY_S:
        return
    _ingest_counted["at"] = now
    try:
        count_pending(wait=False)
    except DatabaseError as exc:
        log.warning("objectives: counting after ingest failed (%s); the next pass counts these rows", exc)


def prune_five_minutes(cur: Any) -> None:
    """Delete the five-minute counts older than FIVE_MINUTES_KEPT_HOURS (by each objective's index range)."""
    from probes.models import ServiceLevelObjective, SLOFiveMinuteCount

    cur.execute(
        f"DELETE FROM {SLOFiveMinuteCount._meta.db_table} WHERE objective_id = ANY(ARRAY(SELECT id FROM "
        f"{ServiceLevelObjective._meta.db_table})) AND start < date_trunc('hour', now()) - "
        f"interval '{FIVE_MINUTES_KEPT_HOURS} hours'"
    )


def fill_five_minutes() -> None:
    """The five-minute counts of the last FIVE_MINUTES_KEPT_HOURS for every current objective, from the raw rows
    up to the counting position and the missed runs none of them replaced: where they start, once (migration
    0041); from then on the counter and the rebuild write them with the other counts."""
    from probes.models import Measurement, MissedRun

    measured, missed = Measurement._meta.db_table, MissedRun._meta.db_table
    recent = f"date_trunc('hour', now()) - interval '{FIVE_MINUTES_KEPT_HOURS} hours'"
    with transaction.atomic(), connection.cursor() as cur:
        through = lock_counted(cur)
        if not lock_objectives(cur):
            return
        calls = f"SELECT {MEASURED} FROM {measured} WHERE scheduled_for >= {recent} AND id <= %s"
        unmeasured = (
            f"(SELECT mr.target_id, mr.region_id, mr.scheduled_for FROM {missed} mr WHERE mr.scheduled_for >= "
            f"{recent} AND NOT EXISTS (SELECT 1 FROM {measured} m WHERE m.probe_id = mr.probe_id "
            "AND m.region_id = mr.region_id AND m.scheduled_for = mr.scheduled_for AND m.id <= %s))"
        )
        classified = (
            f"SELECT * FROM ({classified_calls_sql('recent_calls')} UNION ALL {missed_calls_sql(unmeasured)}) AS c"
        )
        cur.execute(
            f"WITH recent_calls AS MATERIALIZED ({calls}), recent AS MATERIALIZED ({summed_sql(classified)}) "
            f"{add_five_minute_counts_sql('recent')}",
            [through, through],
        )
