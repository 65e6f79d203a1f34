"""The nearest-rank rule in SQL, the same as probes.histogram._rank:
rank = max(1, ceil(q * n)) with q an exact numeric (never float8, whose
0.07 * 100 is 7.000000000000001 and takes the 8th value). PostgreSQL's
percentile_disc computes q * n in float8 and can land one rank off, so no
reader uses it."""

from __future__ import annotations

from decimal import Decimal


def exact(q: float) -> Decimal:
    """q as the decimal it was written as (0.95, not 0.9499999999999999556)."""
    return Decimal(str(q))


def rank_sql(q_sql: str, n_sql: str) -> str:
    """SQL for the 1-based nearest rank of quantile q_sql (a numeric
    parameter) among n_sql values."""
    return f"greatest(1, ceil(({q_sql})::numeric * ({n_sql})))::int"
