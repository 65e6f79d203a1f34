"""Percentiles as text to SIGNIFICANT digits, the way regions.csv writes them.

Written in Python (significant) for the cells Python makes, and in SQL from a histogram bucket index for the
cells PostgreSQL makes: the rollup path of regions.csv reads a percentile as the bucket holding its rank, and a
bucket's text is known ahead (names_sql). The rollup builder writes the cells of a row that is a whole 1 h group
of the export once, when it builds the row (HourlyRollup.percentile_cells), with the same cells_sql the export
uses for the groups it merges: a stored cell and a merged one are the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal

from probes.histogram import BUCKETS, bucket_value

# Percentiles are written to 3 significant digits: that is what the merged
# histograms resolve (2% log buckets read at their midpoint, within 1% of the
# exact value, so a 4th digit would be noise), and the exact raw-row ones get
# the same rule, so a column's precision never depends on which path made it.
# Half away from zero, as PostgreSQL's round(numeric) does, and from the
# value's 15 significant digits, as PostgreSQL turns a float8 into numeric:
# the COPY path (probes.exports.regions.significant_sql) and the Python path
# give the same bytes.
SIGNIFICANT = 3


def significant(value: float | None) -> str | None:
    """value to SIGNIFICANT digits, as plain decimal text ("312", "0.0123",
    "1230", "100.0"); None stays None (an empty cell)."""
    if value is None:
        return None
    number = Decimal(f"{value:.15g}")
    if not number:
        return "0"
    places = SIGNIFICANT - 1 - number.adjusted()
    return format(number.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP), "f")


_PLAIN = re.compile(r"^[0-9.]+$")


def names_sql() -> str:
    """significant(bucket_value(k)) of every histogram bucket k, as a name[] literal to subscript with k + 1.

    name, not text: a name is fixed-width, so subscripting a name[] jumps to its element, where a text[] walks
    every element before it. Digits and a point only, so the literal needs no
    quoting beyond its double quotes."""
    texts = [significant(bucket_value(k)) for k in range(BUCKETS)]
    assert all(t is not None and _PLAIN.match(t) for t in texts)
    return "'{" + ",".join(f'"{t}"' for t in texts) + "}'::name[]"


def cells_sql(indexes: Sequence[str], names: str) -> str:
    """One text of comma-separated cells, one per SQL expression of `indexes` (a histogram bucket index, or
    NULL for an empty cell), each the text names (an expression of names_sql()) holds for that bucket.

    One text rather than a cell each: formatting the 20 percentile cells of a row, one expression each, was
    a large share of regions.csv's statement, so a whole 1 h group's cells are made once, by the rollup builder."""
    return "concat_ws(',', " + ", ".join(f"coalesce({names}[({k}) + 1], '')" for k in indexes) + ")"
