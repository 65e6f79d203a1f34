"""Rows stored by the bulk load the demo's history uses (probes.ingest.store_copied) are counted like rows from
region workers, once however often the load is repeated."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes.ingest import COLUMNS, clean, store_copied
from tests.factories import ProbeFactory, ServiceLevelObjectiveFactory, measurement_payload
from tests.slos_counting.conftest import counts, current, hour_ago


def _copy_text(row: dict) -> str:
    def field(value) -> str:
        if value is None:
            return "\\N"
        if isinstance(value, bool):
            return "t" if value else "f"
        if isinstance(value, datetime):
            return value.isoformat()
        return str(value)

    return "\t".join(field(row[c]) for c in COLUMNS) + "\n"


@pytest.mark.django_db(transaction=True)
def test_a_bulk_load_counts_its_rows_once():
    probe = ProbeFactory()
    region = probe.regions.get()
    objective = current(ServiceLevelObjectiveFactory(targets=[probe.target], ttft_threshold_ms=500))
    start = hour_ago()
    now = datetime.now(UTC)
    rows = [
        clean(measurement_payload(probe, region, start + timedelta(minutes=k), ttft_ms=ttft), now)
        for k, ttft in enumerate((200.0, 500.0, 500.5))
    ]
    block = "".join(_copy_text(row) for row in rows).encode()
    slots = [row["scheduled_for"] for row in rows]
    assert store_copied([block], slots) == 3
    assert store_copied([block], slots) == 0
    assert counts(objective) == {"good": 2, "degraded": 0, "bad": 1, "missed": 0, "excluded": 0}
