"""The Grafana dashboard's Objectives row: budget remaining, burn rate per window with the burn-rate alerts'
factors as its thresholds, attainment per objective and region; its burn-window choice offers the facade's
windows, and its objective variable lists the objectives /metrics names."""

from __future__ import annotations

import json

from probes.readings.slos import BURN_ALERTS, BURN_WINDOWS
from tests.metrics.test_the_grafana_dashboard_queries_only_exposed_metrics import DASHBOARD, metric_names, queries


def _objectives_panels(dashboard: dict) -> list[dict]:
    panels = sorted(dashboard["panels"], key=lambda p: (p["gridPos"]["y"], p["gridPos"]["x"]))
    row = next(i for i, p in enumerate(panels) if p["type"] == "row" and p["title"] == "Objectives")
    following = panels[row + 1 :]
    end = next((i for i, p in enumerate(following) if p["type"] == "row"), len(following))
    return following[:end]


def test_the_objectives_row_reads_attainment_budget_and_burn():
    panels = _objectives_panels(json.loads(DASHBOARD.read_text()))
    names = set().union(*(metric_names(expr) for expr in queries(panels)))
    assert {
        "latency_atlas_slo_attainment_ratio",
        "latency_atlas_slo_error_budget_remaining_ratio",
        "latency_atlas_slo_overall_error_budget_remaining_ratio",
        "latency_atlas_slo_burn_rate",
    } <= names


def test_the_burn_rate_panel_marks_each_alerts_factor():
    panels = _objectives_panels(json.loads(DASHBOARD.read_text()))
    burn = next(p for p in panels if "latency_atlas_slo_burn_rate" in " ".join(queries(p)))
    steps = {step["value"] for step in burn["fieldConfig"]["defaults"]["thresholds"]["steps"]} - {None}
    assert steps == {alert.factor for alert in BURN_ALERTS}
    assert burn["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"]["mode"].startswith("line")


def test_the_burn_window_choice_is_the_facades_windows():
    variables = {v["name"]: v for v in json.loads(DASHBOARD.read_text())["templating"]["list"]}
    offered = [option["value"] for option in variables["burn_window"]["options"]]
    assert offered == [label for label, _ in BURN_WINDOWS]
    assert variables["burn_window"]["query"].split(",") == offered
    # The alerts' long windows are shown by default.
    assert set(variables["burn_window"]["current"]["value"]) <= set(offered)
    assert metric_names(variables["slo"]["query"]["query"].removeprefix("label_values(").split(",")[0]) == {
        "latency_atlas_slo_objective_ratio"
    }
