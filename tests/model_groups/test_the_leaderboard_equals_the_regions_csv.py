"""The issue's "Done when": the leaderboard's p50 and p95 of TTFT and its n are what /export/regions.csv
(bucket=all, the same window, region and targets) says for the same rows, hours read from rollups and the
edges from raw rows alike."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import Permission
from django.test import AsyncClient, Client

from probes.rollups import rebuild_range
from probes.significant import significant
from tests.export_support import close_async_thread_connections, download  # noqa: F401  (autouse)
from tests.factories import ModelGroupFactory, ProbeFactory, RegionFactory, TargetFactory, spread_measurements

pytestmark = pytest.mark.django_db(transaction=True)


def test_p50_p95_and_n_equal_the_csv_export(django_user_model):
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    since, until = now - timedelta(hours=20, minutes=30), now - timedelta(minutes=10)
    oslo, lagos = RegionFactory(slug="zz-oslo"), RegionFactory(slug="zz-lagos")
    fast, slow = TargetFactory(name="fast host"), TargetFactory(name="slow host")
    for seed, (target, median) in enumerate(((fast, 150.0), (slow, 600.0))):
        probe = ProbeFactory(target=target, regions=[oslo, lagos])
        for region in (oslo, lagos):
            spread_measurements(
                probe, region, since, until, 400, seed=seed * 2 + region.id, median=median, fail_every=9
            )
    # The whole hours inside the window from rollups, its edges from raw rows.
    rebuild_range(since, until)
    group = ModelGroupFactory(targets=[fast, slow])
    user = django_user_model.objects.create_user("analyst")
    user.user_permissions.add(*Permission.objects.filter(codename__in=["view_measurement", "view_modelgroup"]))
    client = Client()
    client.force_login(user)
    window = {"since": since.isoformat(), "until": until.isoformat()}

    board = client.get(
        f"/api/v1/model-groups/{group.id}/leaderboard/", {**window, "window": "custom", "region": "zz-oslo"}
    )
    assert board.status_code == 200, board.content
    exporter = AsyncClient()
    exporter.force_login(user)
    params = {**window, "bucket": "all", "region": "zz-oslo", "target": [fast.id, slow.id]}
    response, body = async_to_sync(download)(exporter, "/export/regions.csv", **params)
    assert response.status_code == 200, body
    exported = {row["target"]: row for row in csv.DictReader(io.StringIO(body))}

    rows = board.json()["rows"]
    assert sorted(r["target_name"] for r in rows) == sorted(exported) == ["fast host", "slow host"]
    for row in rows:
        line = exported[row["target_name"]]
        assert row["n"] == int(line["samples"])
        assert significant(row["p50_ttft_ms"]) == line["ttft_p50_ms"]
        assert significant(row["p95_ttft_ms"]) == line["ttft_p95_ms"]
        assert row["success_ratio"] == pytest.approx(1 - float(line["error_rate"]))
