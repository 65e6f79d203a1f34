"""The admin's "Export selected as CSV" over a changelist filtered by a
search that holds placeholder-like text and quotes: the export has exactly
the rows the changelist selected, whether the selection is a few ticked
rows or "all N matching" (a subquery PostgreSQL runs, never ids through
Python), and the search text is data, never SQL."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.db.models import F, Value
from django.test import AsyncClient

from probes.exports.measurements import selection_where
from probes.models import Measurement
from tests.export_support import T0, close_async_thread_connections, rows, series, viewer  # noqa: F401  (autouse)

pytestmark = pytest.mark.django_db(transaction=True)

CHANGELIST = "/admin/probes/measurement/"
TRICKY = """quota 50%s used: it's "ours" %% %(x)s \\' ') OR 1=1 --"""


@pytest.fixture
def staff(django_user_model):
    user = viewer(django_user_model, "staff-selector")
    user.is_staff = True
    user.save()
    client = AsyncClient()
    client.force_login(user)
    return client


@pytest.fixture
def measured(make_region, make_target, make_probe):
    region = make_region(slug="selection-region")
    probe = make_probe(target=make_target(name="Selection target"), regions=[region], name="selection-probe")
    Measurement.objects.bulk_create(
        [
            *series(probe, region, T0, 3, outcome="http_error", error=TRICKY),
            *series(probe, region, T0.replace(hour=11), 3, outcome="http_error", error="quota 50 used"),
            *series(probe, region, T0.replace(hour=12), 2),
        ]
    )
    return probe


def tricky_ids() -> list[int]:
    return sorted(Measurement.objects.filter(error=TRICKY).values_list("id", flat=True))


async def export(staff, search: str, data: dict) -> list[dict]:
    response = await staff.post(f"{CHANGELIST}?q={search}", {"action": "export_csv", **data})
    assert response.status_code == 200, response.content[:300]
    return rows(b"".join([chunk async for chunk in response.streaming_content]).decode())


@pytest.mark.parametrize("search", ["50%25s", "%22it%27s%22", "%27)+OR+1%3D1+--", "%25(x)s", "%25%25"])
async def test_exporting_all_rows_matching_a_tricky_search_exports_exactly_those(staff, measured, search):
    ids = await sync_to_async(tricky_ids)()
    # "Select all N matching": Django sends one ticked id plus select_across.
    got = await export(staff, search, {"_selected_action": [ids[0]], "select_across": "1"})
    assert len(got) == 3
    assert {r["error"] for r in got} == {TRICKY}


async def test_exporting_ticked_rows_of_a_tricky_search_exports_only_those(staff, measured):
    ids = await sync_to_async(tricky_ids)()
    got = await export(staff, "50%25s", {"_selected_action": ids[:2]})
    assert [r["measured_at"] for r in got] == ["2026-03-02T10:00:00.000000Z", "2026-03-02T10:01:00.000000Z"]


def _tricky_by_value():
    return Measurement.objects.filter(error__contains="50%s used: it's").exclude(error__startswith="%(x)s '")


def _tricky_by_expression():
    # A pattern from an expression: Django writes LIKE '%%' || %s || '%%' into
    # the SQL text itself, escaped percent signs among the placeholders.
    return (
        Measurement.objects.annotate(word=Value("it's"))
        .filter(error__contains=F("word"))
        .filter(error__contains="50%s")
    )


@pytest.mark.parametrize("selection", [_tricky_by_value, _tricky_by_expression], ids=["values", "escaped-percent"])
def test_the_selection_is_a_subquery_with_its_values_quoted_as_data(measured, selection):
    queryset = selection()
    if selection is _tricky_by_expression:
        assert "%%" in queryset.values("pk").query.sql_with_params()[0]
    where = selection_where(queryset)
    with connection.cursor() as cur:
        text = where.as_string(cur.connection)
        # PostgreSQL selects the rows, however many: no id list through Python.
        assert text.startswith("m.id IN (SELECT ")
        cur.execute(f"SELECT m.id FROM probes_measurement m WHERE {text} ORDER BY m.id")
        assert [row[0] for row in cur.fetchall()] == tricky_ids()
