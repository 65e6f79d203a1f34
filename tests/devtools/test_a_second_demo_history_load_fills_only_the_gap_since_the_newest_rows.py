"""The demo's history (devtools/demo_history.py) loaded again later stores only the slots since each series' newest
row, and stages no incident of the days before it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devtools.demo_history import load_history
from devtools.demo_seed import seed
from tests.devtools.demo_regions import demo_regions
from tests.partitions.conftest import fresh_days  # noqa: F401 (the fixture)

# The history's days get partitions that would outlive the test's flush: fresh_days drops them again.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_days")]


def test_a_load_30_minutes_later_stores_15_slots_per_series_and_stages_no_earlier_incident():
    seed("http://localhost:9", demo_regions(["eu-london", "ap-singapore"]))
    now = datetime.now(UTC)
    first = load_history(now, days=0.5, evaluate=False)
    # Asked for a week: both staged incidents lie in it, but before the gap, which is all it stores.
    later = load_history(now + timedelta(minutes=30), days=7, evaluate=False)
    assert first.series == later.series == 10
    assert later.rows == pytest.approx(later.series * 15, abs=later.series)
    assert later.incidents == []
