"""Migration 0032 adds the dead letters' key (message and payload) to a table that already holds letters, two of
them the same payload twice (kept by a redelivery before the key existed): every letter stays, without a key;
letters kept after it are once per message and payload."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from probes import deadletters
from probes.models import DeadLetter

BEFORE = [("probes", "0031_ingest_rate_buckets")]
AFTER = [("probes", "0032_dead_letters_once_per_message_payload")]


def migrate(targets) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


@pytest.mark.django_db(transaction=True)
def test_letters_stored_before_the_key_stay_and_new_ones_are_kept_once():
    now = datetime.now(UTC)
    try:
        migrate(BEFORE)
        with connection.cursor() as cur:
            for reason in ("unknown outcome 'x'", "unknown outcome 'x'", "probe 7 does not exist"):
                cur.execute(
                    "INSERT INTO probes_deadletter (received_at, source, reason, payload, payload_text, worker) "
                    "VALUES (%s, 'ingest', %s, '{\"probe_id\": 7}', '', 'w')",
                    [now, reason],
                )
        migrate(AFTER)
        assert sorted(DeadLetter.objects.values_list("reason", "message_id", "payload_index")) == [
            ("probe 7 does not exist", None, None),
            ("unknown outcome 'x'", None, None),
            ("unknown outcome 'x'", None, None),
        ]
        for _ in range(2):
            deadletters.record_many(
                [
                    ({"probe_id": 7}, "unknown outcome 'x'", {"message_id": "task-1", "payload_index": 0}),
                    ({"probe_id": 7}, "unknown outcome 'x'", {"message_id": "task-1", "payload_index": 1}),
                    ({"probe": "?"}, "not a sealed results message", {"message_id": "task-2"}),
                ],
                source="ingest",
                received_at=now,
            )
        assert DeadLetter.objects.count() == 6
        assert set(DeadLetter.objects.exclude(message_id=None).values_list("message_id", "payload_index")) == {
            ("task-1", 0),
            ("task-1", 1),
            ("task-2", None),
        }
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
