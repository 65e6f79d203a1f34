"""The measurement admin's "Export selected as CSV" action: the same columns
and neutralisation as /export/measurements.csv, for the selected rows only,
to staff with the view permission."""

from __future__ import annotations

import pytest
from django.test import AsyncClient

from probes.models import Measurement
from tests.export_support import T0, close_async_thread_connections, download, header, rows, series, viewer  # noqa: F401  (autouse)
from tests.exports.test_export_measurements_csv import ISSUE_COLUMNS

pytestmark = pytest.mark.django_db(transaction=True)

CHANGELIST = "/admin/probes/measurement/"


@pytest.fixture
def staff(django_user_model):
    user = viewer(django_user_model, "staff-exporter")
    user.is_staff = True
    user.save()
    client = AsyncClient()
    client.force_login(user)
    return client


@pytest.fixture
def measured(make_region, make_target, make_probe):
    region = make_region(slug="admin-region")
    probe = make_probe(target=make_target(name="=Admin target"), regions=[region], name="admin-probe")
    Measurement.objects.bulk_create(series(probe, region, T0, 5))
    return list(Measurement.objects.order_by("started_at").values_list("id", flat=True))


async def test_export_selected_streams_only_the_selected_rows(staff, measured):
    chosen = [measured[1], measured[3]]
    response = await staff.post(CHANGELIST, {"action": "export_csv", "_selected_action": chosen})
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="latency-measurements-selected_')
    text = b"".join([chunk async for chunk in response.streaming_content]).decode()
    # The export endpoint's columns (tests/exports/test_export_measurements_csv.py's ISSUE_COLUMNS).
    assert header(text) == ISSUE_COLUMNS
    got = rows(text)
    assert [r["measured_at"] for r in got] == ["2026-03-02T10:01:00.000000Z", "2026-03-02T10:03:00.000000Z"]
    assert {r["target"] for r in got} == {"'=Admin target"}


async def test_the_action_has_the_same_columns_as_the_export_endpoint(staff, measured):
    response = await staff.post(CHANGELIST, {"action": "export_csv", "_selected_action": measured})
    admin_text = b"".join([chunk async for chunk in response.streaming_content]).decode()
    _, endpoint_text = await download(
        staff, "/export/measurements.csv", since="2026-03-02T00:00Z", until="2026-03-03T00:00Z"
    )
    assert admin_text == endpoint_text
