"""A worker survives any message on its queues: garbage pushed with the real
Redis client onto the real queue keys (kombu's list per queue: `ingest`,
`probes.<region>`) is rejected, the workers stay up, and the next slots are
still stored, exactly once each. The ingest worker keeps every rejected
message as a dead letter; a region worker (no database) logs it once,
truncated."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from probes.models import Measurement
from probes.scheduling import Slot, publish, region_queue
from tests.support import wait_for

pytestmark = pytest.mark.timeout(240)

HUGE = b"x{" * 500_000  # a megabyte of garbage


def envelope(queue: str, body: bytes, headers: dict | None, content_type: str = "application/json") -> bytes:
    """kombu's Redis message format around any body and headers."""
    return json.dumps(
        {
            "body": base64.b64encode(body).decode(),
            "content-encoding": "utf-8",
            "content-type": content_type,
            "headers": headers,
            "properties": {
                "correlation_id": str(uuid.uuid4()),
                "reply_to": "",
                "delivery_mode": 2,
                "delivery_info": {"exchange": "", "routing_key": queue},
                "priority": 0,
                "body_encoding": "base64",
                "delivery_tag": str(uuid.uuid4()),
            },
        }
    ).encode()


def task_headers(name: str, **extra) -> dict:
    task_id = str(uuid.uuid4())
    return {
        "lang": "py",
        "task": name,
        "id": task_id,
        "root_id": task_id,
        "parent_id": None,
        "group": None,
        "ignore_result": True,
        "origin": "garbage@test",
        **extra,
    }


def raw_garbage(queue: str, task: str) -> list[bytes]:
    """Messages no worker can take, as bytes for LPUSH."""
    embed = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}
    no_id = task_headers(task)
    del no_id["id"]
    return [
        b"garbage{",
        b"\xff\xfe not utf-8 {",
        HUGE,
        b'{"hello": "world"}',
        b"[1, 2, 3]",
        b"null",
        b'{"properties": {"delivery_tag": "t"}, "body": "!!! not base64 !!!"}',
        envelope(queue, b"not json{", task_headers(task)),  # the body is not JSON
        envelope(queue, b"[1]", task_headers(task)),  # not [args, kwargs, embed]
        envelope(queue, json.dumps([[], {}, embed]).encode(), no_id),  # a task message without an id
        envelope(queue, json.dumps([[], {}, embed]).encode(), {"lang": "py"}),  # no task name
        envelope(queue, b"\x80\x04K\x01.", task_headers(task), "application/x-python-serialize"),  # pickle: refused
    ]


def sent_garbage(app, queue: str) -> int:
    """Well-formed Celery messages that are still garbage, sent by Celery itself."""
    app.send_task("probes.no_such_task", args=[1, 2], queue=queue)
    if queue == "ingest":
        app.send_task("probes.ingest", args=["garbage"], queue=queue)
        app.send_task("probes.ingest", args=[5], queue=queue)
        app.send_task("probes.ingest", args=[], kwargs={"nonsense": True}, queue=queue)
        return 4
    app.send_task("probes.run_slot", args=["garbage"], queue=queue)
    app.send_task("probes.run_slot", args=[{"probe_id": 1}], queue=queue)
    app.send_task("probes.run_slot", args=[], kwargs={"nonsense": True}, queue=queue)
    return 4


def _slot(probe, region, when):
    return Slot(probe.id, probe.target_id, region.id, region.slug, when, probe.interval_seconds, probe.spec().to_dict())


def test_workers_reject_garbage_on_their_queues_stay_up_and_store_the_next_slots_once(pipeline, llm_probe):
    probe = llm_probe(slug="test-garbage", interval=60)
    region = probe.regions.get()
    queue = region_queue("test-garbage")
    ingest = pipeline.start_ingest()
    worker = pipeline.start_region("test-garbage")
    for proc in (ingest, worker):
        wait_for(lambda proc=proc: "ready." in proc.log(), 60, message=f"{proc.args[0]} to be ready")

    base = datetime.now(UTC).replace(microsecond=0)
    slots = [base - timedelta(seconds=k) for k in range(3)]
    ingest_garbage = 0
    # Garbage before each slot: FIFO queues, so each slot is stored only if
    # the workers survived what came before it.
    for when in slots:
        for item in raw_garbage(queue, "probes.run_slot"):
            pipeline.redis.lpush(queue, item)
        for item in raw_garbage("ingest", "probes.ingest"):
            pipeline.redis.lpush("ingest", item)
            ingest_garbage += 1
        sent_garbage(pipeline.app, queue)
        ingest_garbage += sent_garbage(pipeline.app, "ingest")
        publish(pipeline.app, _slot(probe, region, when))

    wait_for(lambda: Measurement.objects.count() >= 3, 120, message="the three slots after the garbage")
    assert sorted(Measurement.objects.values_list("scheduled_for", flat=True)) == sorted(slots)
    assert ingest.popen.poll() is None and worker.popen.poll() is None, pipeline.logs()

    from probes.models import DeadLetter

    try:
        wait_for(lambda: DeadLetter.objects.count() >= ingest_garbage, 60, message="every ingest-side message kept")
    except AssertionError:
        reasons = sorted(DeadLetter.objects.values_list("reason", flat=True))
        raise AssertionError(f"{len(reasons)} of {ingest_garbage} dead letters: {reasons}") from None
    wait_for(
        lambda: (
            pipeline.queue_length("ingest") == 0
            and pipeline.queue_length(queue) == 0
            and pipeline.redis.hlen("unacked") == 0
        ),
        60,
        message="every message taken and settled",
    )
    # Nothing left anywhere to deliver again: each was kept exactly once.
    assert DeadLetter.objects.count() == ingest_garbage
    assert Measurement.objects.count() == 3
    assert set(DeadLetter.objects.values_list("source", flat=True)) == {"ingest"}
    # Kept whole, as received.
    assert DeadLetter.objects.filter(payload_text=HUGE.decode()).count() == 3
    assert DeadLetter.objects.filter(payload_text="garbage{").count() == 3
    assert DeadLetter.objects.filter(payload={"hello": "world"}).count() == 3
    assert DeadLetter.objects.filter(payload="garbage", reason="not a signed message (a str)").count() == 3
    assert all(letter.reason for letter in DeadLetter.objects.all())

    for proc in (ingest, worker):
        log = proc.log_path.read_text(errors="replace")
        assert "Unrecoverable error" not in log
        assert "Traceback" not in log, log[-3000:]
        # Each rejected message is one line, truncated: not a megabyte of log.
        assert len(log) < 200_000
    region_log = worker.log_path.read_text(errors="replace")
    # What no task can take is dropped in one line each; the run orders the central site did not sign are
    # refused, the first of each kind in one line (an order without a schema reads as release 0.1's,
    # schema 1) and the rest only counted.
    assert region_log.count("dropped a ") >= 3 * (len(raw_garbage(queue, "x")) + 1)
    refused = [line for line in region_log.splitlines() if "refused a run order" in line]
    assert len(refused) == 2 and any("message schema 1" in line for line in refused), refused
    assert ingest.popen.poll() is None and worker.popen.poll() is None
