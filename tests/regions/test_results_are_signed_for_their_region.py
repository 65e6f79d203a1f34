"""What a region worker hands to the ingest queue: one argument, a `results`
message signed with its region's credential, holding the measurements with
this process's node name as their worker."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime

from probes.fleet.keys import issue_key, known_keys
from probes.scheduling import Slot, publish
from probes.worker.protocol import RESULTS, open_sealed
from tests.support import wait_for


def test_a_measurement_leaves_the_region_signed_with_its_credential(region_host, llm_probe, pipeline):
    probe = llm_probe(slug="test-sealed-lagos", interval=60)
    region = probe.regions.get()
    issued = issue_key(region)
    # No ingest worker: the message stays on the ingest queue to be read here.
    worker = region_host.start(
        "worker", "--region", region.slug, "--hello-timeout", "1", LATENCY_REGION_KEY=issued.credential
    )
    wait_for(lambda: " ready." in worker.log(), 90, message="the region worker to be ready")
    when = datetime.now(UTC).replace(microsecond=0)
    publish(pipeline.app, Slot(probe.id, probe.target_id, region.id, region.slug, when, 60, probe.spec().to_dict()))
    raw = wait_for(lambda: pipeline.redis.lindex("ingest", 0), 60, message="a message on the ingest queue")
    envelope = json.loads(raw)
    assert envelope["headers"]["task"] == "probes.ingest"
    args, kwargs, _ = json.loads(base64.b64decode(envelope["body"]))
    assert kwargs == {} and len(args) == 1
    (sealed,) = args
    assert sealed["region"] == region.slug and sealed["key_id"] == issued.key_id
    key = known_keys([issued.key_id])[issued.key_id]
    opened = open_sealed(sealed, key.key, kind=RESULTS)
    (payload,) = opened.content
    assert payload["probe_id"] == probe.id and payload["region_id"] == region.id
    assert payload["scheduled_for"] == when.isoformat()
    assert payload["worker"].startswith(f"region-{region.slug}-") and payload["result"]["outcome"] == "ok"
