"""measurements.csv with workload= lists the rows sent with that workload, by each row's own workload whatever its
probe's is now: a row without one (NULL, stored before workloads existed) counts as short; blank lists every row."""

from __future__ import annotations

from datetime import timedelta

import pytest

from probes.models import Measurement
from tests.export_support import T0, close_async_thread_connections, download, rows, series  # noqa: F401  (autouse)

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/export/measurements.csv"
RANGE = {"since": "2026-03-02T00:00:00Z", "until": "2026-03-03T00:00:00Z"}


@pytest.fixture
def world(make_region, make_target, make_probe):
    region = make_region(slug="lagos")
    target = make_target(name="Alpha")
    short = make_probe(target=target, regions=[region], name="short-probe", workload="short")
    long = make_probe(target=target, regions=[region], name="long-probe", workload="prompt_100k")
    Measurement.objects.bulk_create(
        series(short, region, T0, 3, workload="short")
        + series(short, region, T0 + timedelta(seconds=7), 2, workload=None)
        # Sent before its probe was changed to the long prompt: still a short call.
        + series(long, region, T0 + timedelta(seconds=13), 1, workload="short")
        + series(long, region, T0 + timedelta(seconds=19), 4, workload="prompt_100k", ttft_ms=3000.0)
    )


@pytest.mark.parametrize(
    ("workload", "expected"),
    [
        ("prompt_100k", [("long-probe", "prompt_100k")] * 4),
        ("short", [("short-probe", "short")] * 3 + [("short-probe", "")] * 2 + [("long-probe", "short")]),
        ("prompt_10k", []),
        ("", [("short-probe", "short")] * 3 + [("short-probe", "")] * 2 + [("long-probe", "short")]
         + [("long-probe", "prompt_100k")] * 4),
    ],
)  # fmt: skip
async def test_only_the_rows_of_the_workload_are_listed(client, world, workload, expected):
    response, text = await download(client, URL, workload=workload, **RANGE)
    assert response.status_code == 200
    assert sorted((row["probe"], row["workload"]) for row in rows(text)) == sorted(expected)


async def test_the_file_is_named_after_its_workload(client, world):
    named = {}
    for workload in ("prompt_100k", ""):
        response, _ = await download(client, URL, workload=workload, **RANGE)
        named[workload] = response["Content-Disposition"]
    assert (
        named["prompt_100k"]
        == 'attachment; filename="latency-measurements-prompt_100k_20260302T0000Z_20260303T0000Z.csv"'
    )
    assert named[""] == 'attachment; filename="latency-measurements_20260302T0000Z_20260303T0000Z.csv"'
