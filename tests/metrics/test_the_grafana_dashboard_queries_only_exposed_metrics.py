"""deploy/grafana/latency-atlas.json is built on what /metrics exposes: every metric name in every PromQL query of
the dashboard (panels and variables) is a sample name of a real scrape (_bucket, _count, _sum and _total
included), so a renamed metric cannot leave an empty panel behind unnoticed."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from probes.prometheus import render
from tests.factories import ServiceLevelObjectiveFactory, WorkerFactory
from tests.metrics.conftest import families

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "latency-atlas.json"
# PromQL's words that are not metric names: aggregations, functions (followed by "(" anyway), modifiers, keywords.
KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset",
    "inf", "nan",
}  # fmt: skip
IDENTIFIER = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # string literals (label values, regexes)
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # range selectors ([$__rate_interval], [5m])
    text = re.sub(r"\$\w+", "", text)  # Grafana variables
    # Label lists of by / without / on / ignoring / group_left / group_right.
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for match in IDENTIFIER.finditer(text):
        word, rest = match.group(), text[match.end() :].lstrip()
        if rest.startswith("(") or word in KEYWORDS:
            continue  # a function or an aggregation
        names.add(word)
    return names


def queries(node) -> list[str]:
    """Every PromQL expression of the dashboard: panel targets' `expr` and query variables' `query`."""
    found = []
    if isinstance(node, dict):
        if isinstance(node.get("expr"), str):
            found.append(node["expr"])
        if node.get("type") == "query" and "query" in node:
            query = node["query"]
            found.append(query["query"] if isinstance(query, dict) else query)
        for value in node.values():
            found.extend(queries(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(queries(value))
    return found


def exposed_samples(parsed: dict) -> set[str]:
    return {s.name for family in parsed.values() for s in family.samples}


def test_the_name_parser_finds_names_and_only_names():
    expr = (
        'histogram_quantile(0.95, sum by (le, region) (rate(latency_atlas_ttft_seconds_bucket{target=~"$target"}'
        "[$__rate_interval]))) / on (region) group_left (name) latency_atlas_region_info > bool 0"
    )
    assert metric_names(expr) == {"latency_atlas_ttft_seconds_bucket", "latency_atlas_region_info"}
    assert metric_names("label_values(latency_atlas_measurements_total, target)") == {
        "latency_atlas_measurements_total",
        "target",
    }


@pytest.mark.django_db(transaction=True)
def test_every_query_names_only_metrics_a_scrape_exposes(make_probe, stored):
    from probes.slos.rebuild import rebuild

    probe = make_probe()
    region = probe.regions.get()
    now = datetime.now(UTC)
    # An objective counting before the call is stored, so the objectives' families have samples too.
    rebuild(ServiceLevelObjectiveFactory(targets=[probe.target]).id)
    stored(probe, region, now - timedelta(minutes=2), connection="cold", dns_ms=3.0, connect_ms=9.0, tls_ms=18.0)
    WorkerFactory(region=region, last_seen=now)
    exposed = exposed_samples(families(render("", now=lambda: now)[0].decode()))

    dashboard = json.loads(DASHBOARD.read_text())
    expressions = queries(dashboard)
    assert len(expressions) >= 10
    for expr in expressions:
        names = metric_names(expr)
        if expr.startswith("label_values("):
            # label_values(METRIC, LABEL): the label is not a metric.
            names = {expr.removeprefix("label_values(").split(",")[0].strip()}
        assert names, f"no metric in {expr!r}"
        assert names <= exposed, f"{expr!r} names {sorted(names - exposed)}, which /metrics does not expose"


def test_the_dashboard_has_the_panels_the_issue_names():
    dashboard = json.loads(DASHBOARD.read_text())
    kinds = {panel["type"] for panel in dashboard["panels"]}
    assert "geomap" in kinds
    exprs = " ".join(queries(dashboard))
    for needed in ("latency_atlas_probe_duration_seconds", "histogram_quantile", 'outcome!="ok"'):
        assert needed in exprs
    geomap = next(panel for panel in dashboard["panels"] if panel["type"] == "geomap")
    location = geomap["options"]["layers"][0]["location"]
    assert (location["latitude"], location["longitude"]) == ("latitude", "longitude")
