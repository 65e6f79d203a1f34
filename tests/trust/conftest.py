"""Fixtures of the trust tests: a probe measuring from one region, and a
payload maker for it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from tests.factories import measurement_payload

# Slots a few minutes back: plausible times, distinct per k.
BASE = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)


@pytest.fixture
def probe(make_probe):
    return make_probe()


@pytest.fixture
def region(probe):
    return probe.regions.get()


@pytest.fixture
def payloads(probe, region):
    """`payloads(n, start=0)`: n valid measurements of the probe in its region, one slot each."""

    def make(n: int, start: int = 0, *, of_region=None) -> list[dict]:
        where = of_region or region
        return [measurement_payload(probe, where, BASE + timedelta(seconds=k)) for k in range(start, start + n)]

    return make


def ingest(*messages) -> int:
    """The ingest worker's batch, in process: each message the one argument of a task message."""
    from probes.ingest import ingest_messages

    return ingest_messages([((message,), {}, f"probes.ingest[test-{i}]") for i, message in enumerate(messages)])


def every_stored_text() -> str:
    """Every row of every table of ours, as text: where a leaked secret would be."""
    with connection.cursor() as cur:
        cur.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        tables = [name for (name,) in cur.fetchall()]
        texts = []
        for table in tables:
            cur.execute(f'SELECT t::text FROM "{table}" t')
            texts.extend(text for (text,) in cur.fetchall())
    return "\n".join(texts)


# --- run orders and heartbeat replies on a real broker, to a real region worker ---


class OrderBench:
    """A probe of the mock LLM server in one region, the central ingest worker and that region's worker
    (`manage.py region_worker`, the console script's code path) on the suite's Redis, with beats every second.
    `slot(rid)` is a slot of the probe whose request the mock logs under `rid`; `push` puts any order on a
    queue as a plain Celery client would (anyone holding the broker password)."""

    def __init__(self, pipeline, probe, mockllm) -> None:
        self.pipeline, self.probe, self.mockllm = pipeline, probe, mockllm
        self.region = probe.regions.get()
        self.worker = None

    def start(self, *, slug: str | None = None, **env):
        from tests.support import wait_for

        ingest = self.pipeline.start_ingest()
        self.worker = self.pipeline.start_region(
            slug or self.region.slug, hello_timeout=60, LATENCY_HEARTBEAT_SECONDS="1", **env
        )
        for proc in (ingest, self.worker):
            wait_for(lambda proc=proc: " ready." in proc.log(), 90, message=f"{proc.args[0]} to be ready")
        return self.worker

    def slot(self, rid: str, *, region=None, when: datetime | None = None):
        from probes.scheduling import Slot

        region = region or self.region
        spec = self.probe.spec().to_dict()
        spec["headers"] = {**spec["headers"], "x-mock-request-id": rid}
        when = when or datetime.now(UTC).replace(microsecond=0)
        return Slot(self.probe.id, self.probe.target_id, region.id, region.slug, when, 60, spec)

    def content(self, slot, *, expires: datetime | None = None) -> dict:
        """What the scheduler signs for the slot."""
        return {**slot.message(), "expires": (expires or datetime.now(UTC) + timedelta(minutes=5)).isoformat()}

    def push(self, order, queue: str | None = None) -> None:
        from probes.scheduling import RUN_TASK
        from probes.worker.protocol import region_queue

        self.pipeline.app.send_task(RUN_TASK, args=[order], queue=queue or region_queue(self.region.slug))

    def publish(self, slot) -> None:
        """The slot as the central scheduler sends it: signed."""
        from probes.scheduling import publish

        publish(self.pipeline.app, slot)

    def called(self, rid: str) -> bool:
        """Whether the mock LLM server received the request of `rid`."""
        return self.mockllm.log_record(rid) is not None

    def measured(self, slot) -> bool:
        from probes.models import Measurement

        return Measurement.objects.filter(
            probe=self.probe, region_id=slot.region_id, scheduled_for=slot.scheduled_for
        ).exists()

    def worker_row(self, region=None):
        from probes.models import Worker

        return Worker.objects.filter(region=region or self.region).order_by("-last_seen").first()

    def refusal_lines(self, what: str = "a run order") -> list[str]:
        assert self.worker is not None
        return [line for line in self.worker.log().splitlines() if f"refused {what}" in line]


@pytest.fixture
def orders(pipeline, llm_probe, mockllm) -> OrderBench:
    return OrderBench(pipeline, llm_probe(slug="test-orders-fra", interval=60), mockllm)
