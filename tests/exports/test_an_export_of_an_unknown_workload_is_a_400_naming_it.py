"""Both exports refuse a workload that is not one of probes.engine.workloads with a 400 naming `workload`, in the
dashboard's words, before any CSV is sent; real-users.csv has no workload (real users' calls are not the probes')."""

from __future__ import annotations

import json

import pytest

from tests.export_support import close_async_thread_connections  # noqa: F401  (autouse)

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGE = "workload must be one of short, prompt_1k, prompt_10k, prompt_100k, cached_pair"


@pytest.mark.parametrize("url", ["/export/measurements.csv", "/export/regions.csv"])
@pytest.mark.parametrize("workload", ["prompt_1m", "Short", ["short", "prompt_1k"]])
async def test_an_unknown_workload_is_refused(client, url, workload):
    response = await client.get(url, {"workload": workload})
    assert response.status_code == 400
    body = json.loads(response.content)
    assert body["param"] == "workload"
    assert body["error"] == (MESSAGE if isinstance(workload, str) else "workload must be given once")


@pytest.mark.parametrize("url", ["/export/measurements.csv", "/export/regions.csv"])
async def test_a_known_or_blank_workload_is_accepted(client, url):
    for workload in ("prompt_100k", ""):
        response = await client.get(url, {"workload": workload, "bucket": "all"})
        assert response.status_code == 200, workload
