"""An objective's figures over the API: its status now (/api/v1/slos/<id>/status/) and its SLA report over a
period (/api/v1/slos/<id>/report/), read from probes.readings.slos and probes.readings.slo_report, the pages'
and the CSV's own numbers under the CSV's names. Ratios are 0 to 1; a figure without eligible calls is null."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from latency.api_v1.rows import number, when
from probes.readings.slo_report import Report
from probes.readings.slos import BURN_WINDOWS, STATUSES, Budget, CellRow, ObjectiveRow

BurnSerializer = type(
    "BurnSerializer",
    (serializers.Serializer,),
    {
        "__doc__": "The burn rate over each window up to now (1 spends the budget in exactly the objective's window).",
        **{label: number(help_text=f"Over the last {label}.") for label, _span in BURN_WINDOWS},
    },
)


class CountsMixin(serializers.Serializer):
    eligible = serializers.IntegerField(help_text="good + bad: excluded calls are outside.")
    good = serializers.IntegerField(help_text="Good calls, degraded ones included.")
    degraded = serializers.IntegerField()
    bad = serializers.IntegerField(help_text="Bad calls, missed runs included.")
    missed = serializers.IntegerField()
    excluded = serializers.IntegerField(help_text="Calls in silences the objective excludes.")
    attainment = number(help_text="good / eligible (weighted by the mix for an objective's total).")
    budget_allowed = serializers.FloatField(help_text="Bad calls the objective allows: (1 - objective) x eligible.")
    budget_used = serializers.FloatField(help_text="Bad calls spent (with a mix: the weighted share of eligible).")
    budget_remaining = serializers.FloatField(help_text="budget_allowed - budget_used, negative once overspent.")
    budget_used_ratio = number(help_text="budget_used / budget_allowed: above 1 once overspent.")
    budget_remaining_ratio = number(help_text="1 - budget_used_ratio.")


def budget_fields(budget: Budget) -> dict:
    c = budget.counts
    return {
        "eligible": c.eligible,
        "good": c.good,
        "degraded": c.degraded,
        "bad": c.bad,
        "missed": c.missed,
        "excluded": c.excluded,
        "attainment": budget.attainment,
        "budget_allowed": budget.allowed,
        "budget_used": budget.used,
        "budget_remaining": budget.remaining,
        "budget_used_ratio": budget.used_ratio,
        "budget_remaining_ratio": budget.remaining_ratio,
    }


class RegionStatusSerializer(CountsMixin):
    region = serializers.CharField(help_text="The region's slug.")
    share = number(help_text="The region's share of the mix (normalised); null without a mix.")
    burn = BurnSerializer()


class StatusSerializer(CountsMixin):
    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=STATUSES)
    alert = serializers.CharField(allow_null=True, help_text="page or ticket while a burn-rate alert holds.")
    objective_percent = serializers.FloatField()
    window = serializers.CharField()
    since = when(help_text="The window's start.")
    until = when(help_text="Now.")
    exact_since = when(allow_null=True, help_text="The counts are exact from here; null while rebuilding.")
    exhaustion = when(allow_null=True, help_text="Projected at the last 24 hours' burn; null when not burning.")
    burn = BurnSerializer()
    regions = RegionStatusSerializer(many=True, help_text="Each region over every target of the objective.")


def _region(cell: CellRow) -> dict:
    return {"region": cell.region_slug, "share": cell.share, "burn": cell.burn, **budget_fields(cell.budget)}


def status_body(row: ObjectiveRow) -> dict:
    return {
        "id": row.id,
        "name": row.name,
        "status": row.status,
        "alert": row.alert.severity if row.alert else None,
        "objective_percent": row.objective_percent,
        "window": row.window,
        "since": row.since,
        "until": row.until,
        "exact_since": row.exact_since,
        "exhaustion": row.exhaustion,
        "burn": row.burn,
        "regions": [_region(cell) for cell in row.regions],
        **budget_fields(row.budget),
    }


class ReportRowSerializer(CountsMixin):
    target_id = serializers.IntegerField()
    target = serializers.CharField(help_text="The target's name.")
    region = serializers.CharField(help_text="The region's slug.")
    bad_minutes = serializers.IntegerField(help_text="Minutes holding a bad call or a missed run.")


class ReportTotalSerializer(CountsMixin):
    bad_minutes = serializers.IntegerField()


class ThresholdsSerializer(serializers.Serializer):
    ttft = number()
    tpot = number()
    total = number()
    degraded_ttft = number()


class ReportIncidentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    rule = serializers.CharField()
    target_id = serializers.IntegerField()
    target = serializers.CharField()
    regions = serializers.ListField(child=serializers.CharField(), help_text="Region slugs.")
    started_at = when()
    resolved_at = when(allow_null=True)
    duration_seconds = serializers.FloatField(help_text="An open incident's runs to the period's end or now.")


class ReportSilenceSerializer(serializers.Serializer):
    target_id = serializers.IntegerField()
    target = serializers.CharField()
    starts_at = when(help_text="Clipped to the period.")
    ends_at = when(help_text="Clipped to the period.")
    duration_seconds = serializers.FloatField()
    reason = serializers.CharField(allow_blank=True)


class ReportSerializer(serializers.Serializer):
    slo = serializers.IntegerField(help_text="The objective's id.")
    name = serializers.CharField()
    period_start = when(help_text="The period's first hour (UTC).")
    period_end = when(help_text="The end of its last hour (excluded).")
    exact_since = when(allow_null=True, help_text="Later than period_start when the counts began inside the period.")
    objective_percent = serializers.FloatField()
    window = serializers.CharField()
    thresholds = ThresholdsSerializer(help_text="Milliseconds; null when not set.")
    exclude_silences = serializers.BooleanField()
    exclude_rate_limited = serializers.BooleanField(
        help_text="Calls refused for rate limits or overload (429, 529) are excluded rather than bad."
    )
    rows = ReportRowSerializer(many=True, help_text="One per target x region, by target then region.")
    total = ReportTotalSerializer(help_text="Over every row, weighted by the mix when the objective has one.")
    incidents = ReportIncidentSerializer(many=True)
    silences = ReportSilenceSerializer(many=True, help_text="Excluded when exclude_silences is true.")


def report_body(report: Report) -> dict:
    o = report.objective
    return {
        "slo": o.id,
        "name": o.name,
        "period_start": report.since,
        "period_end": report.until,
        "exact_since": report.exact_since,
        "objective_percent": o.objective_percent,
        "window": o.window,
        "thresholds": o.thresholds,
        "exclude_silences": o.exclude_silences,
        "exclude_rate_limited": o.exclude_rate_limited,
        "rows": [
            {
                "target_id": r.target_id,
                "target": r.target_name,
                "region": r.region_slug,
                "bad_minutes": r.bad_minutes,
                **budget_fields(r.budget),
            }
            for r in report.rows
        ],
        "total": {"bad_minutes": report.bad_minutes, **budget_fields(report.total)},
        "incidents": [
            {
                "id": i.id,
                "rule": i.rule_name,
                "target_id": i.target_id,
                "target": i.target_name,
                "regions": [r.slug for r in i.regions],
                "started_at": i.started_at,
                "resolved_at": i.resolved_at,
                "duration_seconds": report.incident_duration(i).total_seconds(),
            }
            for i in report.incidents
        ],
        "silences": [
            {
                "target_id": s.target_id,
                "target": s.target_name,
                "starts_at": s.starts_at,
                "ends_at": s.ends_at,
                "duration_seconds": s.duration.total_seconds(),
                "reason": s.reason,
            }
            for s in report.silences
        ],
    }


def _param(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.STR, OpenApiParameter.QUERY, description=description)


REPORT_PARAMETERS = [
    _param("period", "A calendar month, YYYY-MM (UTC). Without period, start and end: the current month so far."),
    _param("start", "The period's start: an ISO 8601 date or time (UTC without a zone); with end."),
    _param("end", "The period's end (excluded; a date alone includes that day); with start. At most 366 days."),
]
