"""Measurements are read a page at a time by cursor, newest first: rows stored while a client pages through
(newer ones, and ones started at the same moment as a page's last row) neither repeat a row nor skip one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from probes.models import Measurement
from tests.api.conftest import bearer
from tests.factories import MeasurementFactory, ProbeFactory

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def store(probe, region, when: datetime, n: int = 1) -> None:
    for _ in range(n):
        # Several rows at one instant: distinct slots (scheduled_for) started at the same moment.
        slot = when - timedelta(microseconds=Measurement.objects.count() + 1)
        MeasurementFactory(probe=probe, region=region, scheduled_for=slot, started_at=when)


def test_paging_through_while_rows_arrive_lists_every_old_row_once(client, roles):
    probe = ProbeFactory()
    region = probe.regions.get()
    for minute in range(1, 11):
        store(probe, region, NOW - timedelta(minutes=minute), n=2)  # pairs started at one moment: ties
    before = set(Measurement.objects.values_list("id", flat=True))
    seen: list[int] = []
    url = "/api/v1/measurements/?page_size=3&since=2026-11-30T10:00:00Z"
    with time_machine.travel(NOW, tick=False):
        while url:
            page = client.get(url, **bearer(roles.viewer.token))
            assert page.status_code == 200, page.content
            body = page.json()
            seen += [row["id"] for row in body["results"]]
            # New rows arrive between pages: newer than all, and at the instant of the last row read (a
            # higher id, so first among its ties).
            store(probe, region, NOW)
            last = Measurement.objects.get(id=seen[-1]).started_at
            store(probe, region, last)
            url = body["next"]
    old_seen = [i for i in seen if i in before]
    assert sorted(old_seen) == sorted(before)
    assert len(old_seen) == len(set(old_seen)) == 20, old_seen
    started = list(Measurement.objects.filter(id__in=old_seen).values_list("id", "started_at"))
    order = {i: n for n, i in enumerate(old_seen)}
    assert [i for i, _ in sorted(started, key=lambda r: (r[1], r[0]), reverse=True)] == sorted(order, key=order.get)
