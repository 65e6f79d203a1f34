"""k-anonymity: four calls from a place show nothing anywhere (rows, map places, the comparison), the fifth
shows the place; what is left out is counted so a page can say why it is empty."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from probes import readings
from tests.factories import IngestSourceFactory, TargetFactory
from tests.realusers_pages.support import LAGOS, calls

pytestmark = pytest.mark.django_db

T = datetime(2026, 11, 20, 12, 5, tzinfo=UTC)
WINDOW = (T - timedelta(hours=1), T + timedelta(hours=1))


def test_four_calls_from_a_place_show_nothing_and_five_show_it(settings):
    settings.LATENCY_REAL_USERS_MIN_SAMPLES = 5
    TargetFactory(url="https://api.example.com/v1/chat/completions", model="gpt-4o")
    source = IngestSourceFactory()
    calls(source.id, 4, T, LAGOS)

    read = readings.real_users.rows(*WINDOW)
    assert read.rows == []
    assert (read.received, read.withheld) == (4, 4)
    assert readings.real_users.rows(*WINDOW, by_target=False).rows == []

    calls(source.id, 1, T + timedelta(minutes=10), LAGOS)
    read = readings.real_users.rows(*WINDOW)
    assert [(r.city, r.samples) for r in read.rows] == [("Lagos", 5)]
    assert read.withheld == 0


def test_the_minimum_is_a_setting(settings):
    settings.LATENCY_REAL_USERS_MIN_SAMPLES = 2
    source = IngestSourceFactory()
    calls(source.id, 2, T, LAGOS, host="llm.internal", model="m")
    [row] = readings.real_users.rows(*WINDOW).rows
    assert (row.target_id, row.host, row.model, row.samples) == (None, "llm.internal", "m", 2)
