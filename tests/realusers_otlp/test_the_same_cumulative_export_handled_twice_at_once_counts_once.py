"""Two web processes may be handed the same cumulative export at the same moment (an exporter's retry after a
timeout, say). The stream's row is locked while its difference is taken and stored, so the second sees the
first's point and adds nothing: the calls are counted once. (Threads with their own database connections
stand in for the processes: the lock is Postgres's either way.)"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

from django.db import connection
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.metrics.v1.metrics_pb2 import AggregationTemporality

from probes.models import ObservationRollup
from probes.realusers.otlp_metrics import export_metrics
from tests.realusers_otlp.conftest import attributes


def _cumulative(count: int, start_ns: int, time_ns: int) -> ExportMetricsServiceRequest:
    request = ExportMetricsServiceRequest()
    rm = request.resource_metrics.add()
    rm.resource.attributes.extend(attributes({"service.name": "metrics-only"}))
    metric = rm.scope_metrics.add().metrics.add(name="gen_ai.client.operation.duration", unit="s")
    metric.histogram.aggregation_temporality = AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
    point = metric.histogram.data_points.add(
        start_time_unix_nano=start_ns, time_unix_nano=time_ns, count=count, sum=1.5 * count
    )
    point.explicit_bounds.extend([0.5, 1.0, 2.0, 4.0])
    point.bucket_counts.extend([0, 0, count, 0, 0])
    point.attributes.extend(attributes({"gen_ai.request.model": "gpt-4o", "server.address": "api.openai.com"}))
    return request


def _twice_at_once(source, request) -> None:
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def handle() -> None:
        try:
            barrier.wait(10)
            export_metrics(source, request, None, datetime.now(UTC))
        except BaseException as error:  # reported by the test, not lost in the thread
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=handle) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors


def test_two_threads_storing_one_export_count_its_calls_once(source):
    # Both points in one past hour (ten minutes into the last one), so one rollup row holds them whatever the
    # minute the test runs at.
    hour_ns = (time.time_ns() // 3_600_000_000_000 - 1) * 3_600_000_000_000
    start = hour_ns + 600_000_000_000
    _twice_at_once(source, _cumulative(4, start, start + 30_000_000_000))  # a stream not seen before
    [rollup] = ObservationRollup.objects.all()
    assert (rollup.host, rollup.model, rollup.samples) == ("api.openai.com", "gpt-4o", 4)

    # The stream's next export (6 calls since its start), twice at once: the 2 new calls, once.
    _twice_at_once(source, _cumulative(6, start, start + 50_000_000_000))
    rollup.refresh_from_db()
    assert rollup.samples == 6
