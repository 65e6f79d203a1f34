"""Reading one workload (Selection.workload: probes.engine.workloads): which rows and rollups count.

A target can be probed by several probes with different workloads, and time to first token grows with the prompt,
so a figure that mixes a short prompt with a 100k-token one describes neither. A chosen workload narrows:

- raw rows by their own workload (Measurement.workload), so a probe whose workload changed counts each row under
  the workload it was sent with. A row without one (NULL) was stored before workloads existed, or sent by a worker
  of an older release, and both sent the short prompt: it counts as short;
- hourly rollups and the series blocks built from them by probe: those of the probes whose workload is now the
  chosen one (probe_ids). A rollup row keeps no workload, only its probe, so the hours of a probe from before a
  change of its workload count under its new one. The rows a reading subtracts from such an hour (the head of a
  window, plan.Coverage.minus) are narrowed the same way, by probe, so that they are the rows its rollups counted;
- region rollup blocks (probes.rollups.ladder) hold every probe of a region and cannot be narrowed at all: a
  reading of one workload never uses them, and reads per-probe rollups and raw rows instead.

Empty (the default) is every workload, as before workloads were selectable.
"""

from __future__ import annotations

from django.db.models import Q
from psycopg import sql

from probes.engine.workloads import SHORT, WORKLOADS

# Empty: every workload.
ALL = ""
CHOICES = WORKLOADS


def row_sql(alias: str = "") -> str:
    """A raw row's workload in SQL, NULL read as short (see the module)."""
    a = f"{alias}." if alias else ""
    return f"coalesce({a}workload, '{SHORT}')"


def row_composed(alias: str = "") -> sql.Composed:
    """row_sql as a psycopg composition, for the statements run under COPY (literals, no parameters)."""
    column = sql.SQL("{}.workload").format(sql.Identifier(alias)) if alias else sql.Identifier("workload")
    return sql.SQL("coalesce({}, {})").format(column, sql.Literal(SHORT))


def row_q(workload: str) -> Q:
    """The rows of `workload` as an ORM condition: row_sql's rule (NULL read as short) for querysets."""
    own = Q(workload=workload)
    return own | Q(workload__isnull=True) if workload == SHORT else own


def probe_ids(workload: str, among: list[int] | None = None) -> list[int]:
    """The ids of the probes whose workload is now `workload` (the rollups a reading of it may use), sorted;
    among: only these (a selection's own probes; empty or None: any)."""
    from probes.models import Probe

    probes = Probe.objects.filter(workload=workload)
    if among:
        probes = probes.filter(id__in=among)
    return sorted(probes.values_list("id", flat=True))
