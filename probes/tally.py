"""Running totals of stored measurements per target x region x outcome, for /metrics' counters.

Why a table and not count(*): Prometheus counters must only go up, across restarts of the web process and across
retention pruning (which deletes raw rows), and a scrape must not count millions of rows. So ingest adds to these
rows in the same statement that stores the measurements (probes.ingest), counting exactly the rows its
insert-or-ignore stored: a redelivered message stores nothing and adds nothing. Pruning never touches them; a
target's rows go only with the target (CASCADE).

Besides the count, each row keeps a cumulative Prometheus histogram of probes.metrics.PROMETHEUS_HISTOGRAM (TTFT):
how many of its values were at most each bound of BUCKETS_S, how many values there were, and their sum. Cumulative
counts add up elementwise, so the ingest's update is a plain sum, and the reader sums the outcomes of a target x
region. Imported by probes.models.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from probes.metrics import PROMETHEUS_HISTOGRAM

# Upper bounds (le, seconds) of the histogram's buckets, +Inf implied: dense where first tokens come (0.1 to 2.5 s).
# Ten, because every bucket is a sample per target x region on every scrape, and encoding them is most of a
# scrape's CPU (bench/metrics.py). Changing them changes what stored counts mean: it takes a migration that
# resets ttft_buckets (Prometheus then sees a counter reset).
BUCKETS_S: tuple[float, ...] = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.5, 5.0, 10.0, 30.0)


class MeasurementTally(models.Model):
    """Measurements stored so far for one target, region and outcome (never decremented), with the histogram."""

    target = models.ForeignKey("probes.Target", on_delete=models.CASCADE, related_name="+", db_index=False)
    region = models.ForeignKey("probes.Region", on_delete=models.CASCADE, related_name="+", db_index=False)
    outcome = models.CharField(max_length=20)
    measurements = models.BigIntegerField(default=0)
    # Of the TTFT values among them (a failed call may have none): count, sum in ms, and per bound of BUCKETS_S
    # the count of values at most that bound.
    ttft_count = models.BigIntegerField(default=0)
    ttft_sum_ms = models.FloatField(default=0.0)
    ttft_buckets = ArrayField(models.BigIntegerField())

    class Meta:
        constraints = [
            # Ingest's ON CONFLICT target, and the deletes of a target's cascade (the table is a few rows per pair).
            models.UniqueConstraint(fields=["target", "region", "outcome"], name="tally_one_per_outcome"),
        ]

    def __str__(self) -> str:
        return f"{self.measurements} {self.outcome}"


def _bucket_counts(alias: str) -> str:
    column = f"{alias}.{PROMETHEUS_HISTOGRAM.column}"
    scale = 1000.0  # the column is in ms, the bounds in seconds
    return ", ".join(f"count(*) FILTER (WHERE {column} <= {bound * scale!r})" for bound in BUCKETS_S)


def tally_sql(source: str) -> str:
    """An INSERT adding the rows of `source` (a CTE or table with target_id, region_id, outcome and the histogram
    metric's column) to the tally: for ingest's WITH, right after the measurements' own INSERT ... RETURNING.
    Rows are upserted in key order, so two ingest workers lock tally rows in the same order (no deadlock)."""
    table = MeasurementTally._meta.db_table
    column = f"s.{PROMETHEUS_HISTOGRAM.column}"
    return (
        f"INSERT INTO {table} AS t (target_id, region_id, outcome, measurements, ttft_count, ttft_sum_ms, "
        "ttft_buckets) "
        f"SELECT s.target_id, s.region_id, s.outcome, count(*), count({column}), coalesce(sum({column}), 0), "
        f"ARRAY[{_bucket_counts('s')}]::bigint[] "
        f"FROM {source} s GROUP BY 1, 2, 3 ORDER BY 1, 2, 3 "
        "ON CONFLICT (target_id, region_id, outcome) DO UPDATE SET "
        "measurements = t.measurements + EXCLUDED.measurements, "
        "ttft_count = t.ttft_count + EXCLUDED.ttft_count, "
        "ttft_sum_ms = t.ttft_sum_ms + EXCLUDED.ttft_sum_ms, "
        "ttft_buckets = ARRAY(SELECT a + b FROM unnest(t.ttft_buckets, EXCLUDED.ttft_buckets) "
        "WITH ORDINALITY AS u(a, b, i) ORDER BY i)"
    )
