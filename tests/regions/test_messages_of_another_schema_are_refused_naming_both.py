"""Message schemas: a run order of another schema is refused by the region
worker with one line naming both schemas and releases, and a heartbeat of
another schema is refused by the central site, whose answer names both."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

from kombu import Connection, Queue

from probes.fleet.keys import issue_key
from probes.scheduling import Slot, publish
from probes.worker.protocol import HEARTBEAT, SCHEMA, Credential, release, reply_queue, seal
from tests.support import wait_for


def test_a_run_order_of_another_schema_is_refused_in_one_line(region_host, llm_probe, pipeline):
    probe = llm_probe(slug="test-schema-lagos", interval=60)
    region = probe.regions.get()
    credential = issue_key(region).credential
    worker = region_host.start("worker", "--region", region.slug, "--hello-timeout", "1", LATENCY_REGION_KEY=credential)
    wait_for(lambda: " ready." in worker.log(), 90, message="the region worker to be ready")
    slot = Slot(probe.id, probe.target_id, region.id, region.slug, datetime.now(UTC), 60, probe.spec().to_dict())
    order = {**slot.message(), "schema": SCHEMA + 1, "release": "9.9.9"}
    pipeline.app.send_task("probes.run_slot", args=[order], queue=f"probes.{region.slug}")
    publish(pipeline.app, slot)  # then a good one: the worker is still there
    wait_for(lambda: " succeeded in " in worker.log(), 60, message="the good order to run")
    lines = [line for line in worker.log().splitlines() if "refused a run order" in line]
    assert len(lines) == 1, worker.log()
    assert f"schema {SCHEMA + 1} (release 9.9.9)" in lines[0] and f"schema {SCHEMA} (release {release()})" in lines[0]


def test_a_heartbeat_of_another_schema_is_answered_with_both_schemas(region_host, make_region, pipeline):
    region = make_region(slug="test-schema-oslo")
    credential = Credential.parse(issue_key(region).credential)
    region_host.ingest()
    instance = uuid.uuid4().hex
    reply_to = reply_queue(region.slug, instance)
    content = {"instance": instance, "state": "starting", "seq": 1, "reply_to": reply_to}
    message = {**seal(HEARTBEAT, region.slug, credential, content), "schema": SCHEMA + 1, "release": "9.9.9"}
    with Connection(pipeline.redis_url) as conn:
        queue = Queue(reply_to, routing_key=reply_to, auto_delete=True)
        replies = conn.SimpleQueue(queue)
        pipeline.app.send_task("probes.heartbeat", args=[message], queue="health")
        reply = replies.get(block=True, timeout=60)
        body = reply.payload
        reply.ack()
        replies.close()
    content = json.loads(body["body"])  # signed by the central key
    assert content["ok"] is False and body["schema"] == SCHEMA
    assert f"schema {SCHEMA + 1} (release 9.9.9)" in content["reason"]
    assert f"schema {SCHEMA} (release {release()})" in content["reason"]
