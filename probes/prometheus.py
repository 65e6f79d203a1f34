"""/metrics: what Latency Atlas measured, in the Prometheus text format (or OpenMetrics when asked for), written by
prometheus-client from a Collector of our own over a registry made for each scrape (no global registry: nothing
is kept between scrapes, so every process answers the same and a restart changes nothing).

Every figure comes through the read package (probes.readings: latest_results, window_quantiles, tallies,
region_rows, slos.objective_rows); metric names of measured values come from the metric list (probes.metrics:
Metric.prometheus and PROMETHEUS_HISTOGRAM). Labels: `target` (the target's name), `region` (the region's slug),
`outcome`, `slo` (the objective's name); values in Prometheus' base units (seconds).

The last-result families carry only `target` and `region`, as blackbox_exporter's probe_* do: a pair's series keeps
its identity whatever the outcome, so `probe_success == 0`, `avg_over_time(probe_success[1h])` and the graphs of a
pair stay one line. The outcome itself is one more series, probe_outcome, joined on (target, region) when a table
or an alert wants to say why.

Families (docs/guides/prometheus-grafana.md):
  latency_atlas_probe_success{target,region}                             1 when the last result is ok, else 0
  latency_atlas_probe_outcome{target,region,outcome}                     1, for the last result's outcome only
  latency_atlas_probe_duration_seconds{target,region,phase}              its phases (dns, connect, tls,
                                                                         processing, first_token, transfer);
                                                                         a phase it did not have is left out
  latency_atlas_probe_<Metric.prometheus>{target,region}                 ttft_seconds, ttfat_seconds,
                                                                         tokens_per_second (when it has them)
  latency_atlas_probe_http_status{target,region}                         its HTTP status (when it had an answer)
  latency_atlas_probe_started_timestamp_seconds{target,region}           when it started (Unix time)
  latency_atlas_measurements_total{target,region,outcome}                counter (probes.tally)
  latency_atlas_ttft_seconds{target,region}                              cumulative histogram (probes.tally)
  latency_atlas_ttft_quantile_seconds{target,region,window,quantile}     trailing-window quantiles (5m, 1h;
                                                                         0.5, 0.95, 0.99), exact nearest rank
  latency_atlas_region_info{region,name,latitude,longitude}              1, for joins (Grafana's geomap)
  latency_atlas_region_status{region,status}                             1 for its status (live|stale|dark)
  latency_atlas_region_workers_live{region}                              workers heard within the stale limit
  latency_atlas_region_last_seen_timestamp_seconds{region}               newest heartbeat (Unix time), if any

Service level objectives (probes.readings.slos.objective_rows; `slo` is the objective's name, `window` a
BURN_WINDOWS label). A series whose value is undefined (no eligible call in its window) is left out, never NaN:
  latency_atlas_slo_attainment_ratio{slo,target,region}                  good / eligible over the objective's window
  latency_atlas_slo_error_budget_remaining_ratio{slo,target,region}      budget left / budget allowed over it
                                                                         (negative once overspent)
  latency_atlas_slo_burn_rate{slo,window}                                the objective's burn rate (mix-weighted)
  latency_atlas_slo_overall_attainment_ratio{slo}                        the objective's attainment (mix-weighted)
  latency_atlas_slo_overall_error_budget_remaining_ratio{slo}            its budget left, as a share
  latency_atlas_slo_objective_ratio{slo}                                 the objective itself (0.99 for 99 %)
  latency_atlas_slo_status{slo,status}                                   1 for its status, 0 for the others
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector, CollectorRegistry

from probes import readings
from probes.engine.result import REFUSED
from probes.metrics import PROMETHEUS, PROMETHEUS_HISTOGRAM, PROMETHEUS_SCALE
from probes.readings.fleet import REGION_STATUSES
from probes.readings.slos import BURN_WINDOWS, STATUSES
from probes.tally import BUCKETS_S

PREFIX = "latency_atlas_"
# The phase breakdown's pieces (probes.readings.summaries.SEGMENTS) under the names blackbox_exporter users know.
PHASE_NAMES = {
    "dns": "dns",
    "connect": "connect",
    "tls": "tls",
    "server_wait": "processing",
    "first_token": "first_token",
    "streaming": "transfer",
}
PAIR = ["target", "region"]
RESULT = ["target", "region", "outcome"]


def _seconds(ms: float) -> float:
    return ms * PROMETHEUS_SCALE["ms"]


class AtlasCollector(Collector):
    """Every family of /metrics, read afresh at each collect(); `now` is asked for once per collect."""

    def __init__(self, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.now = now

    def collect(self) -> Iterator[Metric]:
        now = self.now()
        yield from self._latest()
        yield from self._tallies()
        yield self._quantiles(now)
        yield from self._regions(now)
        yield from self._objectives(now)

    def _latest(self) -> Iterator[Metric]:
        success = GaugeMetricFamily(
            PREFIX + "probe_success", "Whether the last measurement succeeded (outcome ok).", labels=PAIR
        )
        phases = GaugeMetricFamily(
            PREFIX + "probe_duration_seconds",
            "Phases of the last measurement: dns, connect, tls, processing (server wait), first_token (first "
            "token after the first byte), transfer (the rest of the stream); a phase it did not have is left out.",
            labels=[*PAIR, "phase"],
            unit="seconds",
        )
        values = {
            m.name: GaugeMetricFamily(
                PREFIX + "probe_" + m.prometheus, f"{m.label} of the last measurement.", labels=PAIR
            )
            for m in PROMETHEUS
        }
        outcome = GaugeMetricFamily(
            PREFIX + "probe_outcome",
            "The last measurement's outcome (ok, timeout, http_error, ...): 1, to join on target and region.",
            labels=RESULT,
        )
        status = GaugeMetricFamily(
            PREFIX + "probe_http_status", "HTTP status of the last measurement's answer.", labels=PAIR
        )
        started = GaugeMetricFamily(
            PREFIX + "probe_started_timestamp_seconds",
            "When the last measurement started (Unix time).",
            labels=PAIR,
            unit="seconds",
        )
        for row in readings.latest_results():
            labels = [row.target, row.region]
            success.add_metric(labels, 1.0 if row.outcome == "ok" else 0.0)
            outcome.add_metric([*labels, row.outcome], 1.0)
            started.add_metric(labels, row.started_at.timestamp())
            if row.http_status is not None:
                status.add_metric(labels, float(row.http_status))
            for piece, ms in row.phases.items():
                phases.add_metric([*labels, PHASE_NAMES[piece]], _seconds(ms))
            for m in PROMETHEUS:
                value = row.values[m.name]
                if value is not None:
                    values[m.name].add_metric(labels, value * PROMETHEUS_SCALE[m.unit])
        yield success
        yield outcome
        yield phases
        yield from values.values()
        yield status
        yield started

    def _tallies(self) -> Iterator[Metric]:
        total = CounterMetricFamily(
            PREFIX + "measurements",
            "Measurements stored, by the outcome of each; never lowered by retention pruning.",
            labels=RESULT,
        )
        # The histogram has no outcome label: a target x region's outcomes are summed (cumulative counts add).
        buckets: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * len(BUCKETS_S))
        counts: dict[tuple[str, str], int] = defaultdict(int)
        sums: dict[tuple[str, str], float] = defaultdict(float)
        for row in readings.tallies():
            total.add_metric([row.target, row.region, row.outcome], float(row.measurements))
            if row.outcome in REFUSED:  # counted above, never a latency sample
                continue
            pair = (row.target, row.region)
            buckets[pair] = [a + b for a, b in zip(buckets[pair], row.ttft_buckets, strict=True)]
            counts[pair] += row.ttft_count
            sums[pair] += row.ttft_sum_ms
        histogram = HistogramMetricFamily(
            PREFIX + PROMETHEUS_HISTOGRAM.prometheus,
            f"{PROMETHEUS_HISTOGRAM.label} of every measurement stored that has one.",
            labels=PAIR,
            unit="seconds",
        )
        for pair, cumulative in buckets.items():
            points = [(repr(bound), float(n)) for bound, n in zip(BUCKETS_S, cumulative, strict=True)]
            points.append(("+Inf", float(counts[pair])))
            histogram.add_metric(list(pair), points, sum_value=_seconds(sums[pair]))
        yield total
        yield histogram

    def _quantiles(self, now: datetime) -> Metric:
        family = GaugeMetricFamily(
            f"{PREFIX}{PROMETHEUS_HISTOGRAM.name}_quantile_seconds",
            f"{PROMETHEUS_HISTOGRAM.label} quantiles over the trailing window (nearest rank of its raw values).",
            labels=[*PAIR, "window", "quantile"],
            unit="seconds",
        )
        for row in readings.window_quantiles(now):
            family.add_metric([row.target, row.region, row.window, repr(row.quantile)], _seconds(row.value))
        return family

    def _regions(self, now: datetime) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            PREFIX + "region_info",
            "A region's name and place (latitude, longitude in degrees): 1, to join on region.",
            labels=["region", "name", "latitude", "longitude"],
        )
        status = GaugeMetricFamily(
            PREFIX + "region_status",
            "1 for the region's status (live, stale or dark), 0 for the others.",
            labels=["region", "status"],
        )
        workers = GaugeMetricFamily(
            PREFIX + "region_workers_live", "Region workers heard within the stale limit.", labels=["region"]
        )
        seen = GaugeMetricFamily(
            PREFIX + "region_last_seen_timestamp_seconds",
            "Newest heartbeat of any of the region's workers (Unix time); absent when none was ever heard.",
            labels=["region"],
            unit="seconds",
        )
        for row in readings.region_rows(now):
            info.add_metric([row.slug, row.name, repr(row.latitude), repr(row.longitude)], 1.0)
            for name in REGION_STATUSES:
                status.add_metric([row.slug, name], 1.0 if row.status == name else 0.0)
            workers.add_metric([row.slug], float(row.workers_live))
            if row.last_seen is not None:
                seen.add_metric([row.slug], row.last_seen.timestamp())
        yield from (info, status, workers, seen)

    def _objectives(self, now: datetime) -> Iterator[Metric]:
        cell = ["slo", "target", "region"]
        attainment = GaugeMetricFamily(
            PREFIX + "slo_attainment_ratio",
            "Good calls / eligible calls of an objective's target and region over the objective's window; left out "
            "without eligible calls.",
            labels=cell,
        )
        remaining = GaugeMetricFamily(
            PREFIX + "slo_error_budget_remaining_ratio",
            "Error budget left / budget allowed of an objective's target and region over the objective's window: "
            "1 untouched, 0 spent, negative overspent; left out without eligible calls.",
            labels=cell,
        )
        burn = GaugeMetricFamily(
            PREFIX + "slo_burn_rate",
            "How fast the objective spends its error budget over the trailing window (1 spends it in exactly the "
            "objective's window); left out without eligible calls in that window.",
            labels=["slo", "window"],
        )
        overall = GaugeMetricFamily(
            PREFIX + "slo_overall_attainment_ratio",
            "The objective's attainment over its window, over all its targets and regions (weighted by its mix "
            "when it has one); left out without eligible calls.",
            labels=["slo"],
        )
        overall_remaining = GaugeMetricFamily(
            PREFIX + "slo_overall_error_budget_remaining_ratio",
            "The objective's error budget left as a share of the budget allowed (weighted by its mix when it has "
            "one); left out without eligible calls.",
            labels=["slo"],
        )
        objective = GaugeMetricFamily(
            PREFIX + "slo_objective_ratio",
            "The objective: the share of eligible calls that must be good.",
            labels=["slo"],
        )
        status = GaugeMetricFamily(
            PREFIX + "slo_status",
            "1 for the objective's status (" + ", ".join(STATUSES) + "), 0 for the others.",
            labels=["slo", "status"],
        )
        for row in readings.slos.objective_rows(now, cells=True):
            objective.add_metric([row.name], row.objective)
            for name in STATUSES:
                status.add_metric([row.name, name], 1.0 if row.status == name else 0.0)
            if row.budget.attainment is not None:
                overall.add_metric([row.name], row.budget.attainment)
            if row.budget.remaining_ratio is not None:
                overall_remaining.add_metric([row.name], row.budget.remaining_ratio)
            for label, _ in BURN_WINDOWS:
                rate = row.burn.get(label)
                if rate is not None:
                    burn.add_metric([row.name, label], rate)
            for c in row.cells:
                labels = [row.name, c.target_name, c.region_slug]
                if c.budget.attainment is not None:
                    attainment.add_metric(labels, c.budget.attainment)
                if c.budget.remaining_ratio is not None:
                    remaining.add_metric(labels, c.budget.remaining_ratio)
        yield from (attainment, remaining, burn, overall, overall_remaining, objective, status)


def render(accept: str, now: Callable[[], datetime] | None = None) -> tuple[bytes, str]:
    """(body, content type) of a scrape: OpenMetrics when `accept` (the request's Accept header) asks for it,
    the Prometheus text format otherwise."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(AtlasCollector(now) if now else AtlasCollector())
    encode, content_type = choose_encoder(accept)
    return encode(registry), content_type
