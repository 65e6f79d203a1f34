"""The measurement admin's date hierarchy and started-at filter name the slot time too: a day's changelist lists
the rows started that day, late and early starts at its edges included, from the slot-time partitions around it."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from tests.slot_windows.support import SINCE, edge_rows, started_within
from tests.slot_windows.test_every_endpoints_statements_are_bounded_by_slot_time import assert_bounded, statements

pytestmark = pytest.mark.django_db

DAY = SINCE.replace(hour=0)
URL = "/admin/probes/measurement/"


@pytest.fixture
def day_rows(make_region, make_probe):
    region = make_region(slug="lagos")
    probe = make_probe(regions=[region])
    edge_rows(probe, region, DAY, DAY + timedelta(days=1))
    return started_within(DAY, DAY + timedelta(days=1))


def listed(response) -> set[int]:
    assert response.status_code == 200
    return {m.id for m in response.context["cl"].result_list}


def test_a_day_of_the_date_hierarchy_lists_its_rows_by_slot_bounded_reads(admin_client, day_rows):
    query = {"started_at__year": DAY.year, "started_at__month": DAY.month, "started_at__day": DAY.day}
    with statements() as seen:
        response = admin_client.get(URL, query)
    assert listed(response) == {m.id for m in day_rows}
    assert_bounded(seen)


def test_the_started_filters_today_lists_its_rows_by_slot_bounded_reads(admin_client, day_rows):
    # As the filter's own "Today" link writes them.
    today = {"started_at__gte": str(DAY), "started_at__lt": str(DAY + timedelta(days=1))}
    with time_machine.travel(DAY + timedelta(hours=12), tick=False), statements() as seen:
        response = admin_client.get(URL, today)
    assert listed(response) == {m.id for m in day_rows}
    assert_bounded(seen)
