"""The nearest-rank rule in SQL, the same as probes.histogram._rank:
rank = max(1, ceil(q * n)) with q an exact numeric (never float8, whose
0.07 * 100 is 7.000000000000001 and takes the 8th value). PostgreSQL's
percentile_disc computes q * n in float8 and can land one rank off, so a
reader uses it only for quantiles where float8 is proven to agree with the
exact rank for every n it can meet (float_rank_agrees; a test holds the
readers that do to it)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction


def exact(q: float) -> Decimal:
    """q as the decimal it was written as (0.95, not 0.9499999999999999556)."""
    return Decimal(str(q))


def rank_sql(q_sql: str, n_sql: str) -> str:
    """SQL for the 1-based nearest rank of quantile q_sql (a numeric
    parameter) among n_sql values."""
    return f"greatest(1, ceil(({q_sql})::numeric * ({n_sql})))::int"


def float_rank_agrees(q: float, n_max: int) -> bool:
    """Whether ceil(q * n) in float8 (what PostgreSQL's percentile_disc takes) is the exact nearest rank for
    every n in 1..n_max. Python's float is the same IEEE double as float8, so this answers for PostgreSQL."""
    num, den = Fraction(str(q)).as_integer_ratio()
    # -(-a // b) is ceil(a / b) in integers: exact, and fast enough to check a million n.
    return all(max(1, math.ceil(q * n)) == max(1, -(-num * n // den)) for n in range(1, n_max + 1))


def reached_sql(q: float, cumulative_sql: str, n_sql: str) -> str:
    """SQL true where a cumulative count has reached the nearest rank of q among n_sql values, in integer
    arithmetic: c >= ceil(q * n) is c * den >= num * n for q = num / den exactly (c is a whole count, and at least
    1 wherever a bucket holds a value, so the rank's floor of 1 is met too). For bigint counts, where rank_sql's
    numeric product per row would cost more than the comparison it feeds."""
    num, den = Fraction(str(q)).as_integer_ratio()
    return f"({cumulative_sql}) * {den} >= ({n_sql}) * {num}"
