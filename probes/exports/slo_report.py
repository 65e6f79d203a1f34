"""slo-report.csv: an objective's SLA report over a period (probes.readings.slo_report, the report page's and the
API's own numbers), one line per target x region and a last line, with target and region empty, for the total
(weighted by the objective's mix when it has one). Times are UTC; ratios are 0 to 1 (budget_used_ratio above 1
once the budget is overspent); a figure without eligible calls is an empty cell."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from datetime import datetime

from asgiref.sync import sync_to_async

from probes.exports import stamp
from probes.exports.csvsafe import header_line, neutralise
from probes.exports.regions import iso_text
from probes.readings.slo_report import Report

SLO_REPORT_COLUMNS = (
    "slo",
    "period_start",
    "period_end",
    "target",
    "region",
    "eligible",
    "good",
    "degraded",
    "bad",
    "missed",
    "excluded",
    "attainment",
    "budget_allowed",
    "budget_used",
    "budget_used_ratio",
    "bad_minutes",
)


def _figures(budget) -> list:
    c = budget.counts
    return [
        c.eligible,
        c.good,
        c.degraded,
        c.bad,
        c.missed,
        c.excluded,
        budget.attainment,
        budget.allowed,
        budget.used,
        budget.used_ratio,
        c.bad_minutes,
    ]


def report_lines(report: Report) -> list[list]:
    """The CSV's lines as values (None for an empty cell), before quoting and neutralisation."""
    head = [report.objective.name, iso_text(report.since), iso_text(report.until)]
    lines = [[*head, row.target_name, row.region_slug, *_figures(row.budget)] for row in report.rows]
    lines.append([*head, "", "", *_figures(report.total)])
    return lines


def report_text(report: Report) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for line in report_lines(report):
        writer.writerow([neutralise(v) for v in line])
    return out.getvalue()


def report_filename(report: Report) -> str:
    return f"latency-slo-report-{report.objective.id}_{stamp(report.since)}_{stamp(report.until)}.csv"


async def slo_report_csv(report: Report) -> AsyncIterator[bytes]:
    yield header_line(SLO_REPORT_COLUMNS)
    # A few lines per target x region: read whole, already.
    yield (await sync_to_async(report_text)(report)).encode()


def read_report(objective_id: int, since: datetime, until: datetime, now: datetime) -> Report | None:
    from probes.readings.slo_report import report

    return report(objective_id, since, until, now)
