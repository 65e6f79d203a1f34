"""Chart JSON from /api/* follows the reader's language: axis titles,
legend names, hover text and the "why no data" messages."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from probes.models import Measurement
from tests.factories import MeasurementFactory, WorkerFactory

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-CN"}


@pytest.fixture
def measured(settings, make_region, make_target, make_probe):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    region = make_region(slug="ch-lagos", name="Lagos", latitude=6.5, longitude=3.4)
    target = make_target(name="Chart API", url="http://plain.example/v1/chat/completions")
    probe = make_probe(target=target, regions=[region])
    # A worker heard just now: a region without one is drawn dark, not coloured by its numbers.
    WorkerFactory(region=region)
    now = timezone.now()
    Measurement.objects.bulk_create(
        [
            MeasurementFactory.build(
                probe=probe, region=region, scheduled_for=now - timedelta(minutes=i + 1), ttft_ms=100.0 + i, tls_ms=None
            )
            for i in range(20)
        ]
    )
    return target


@pytest.mark.django_db
def test_the_distribution_axis_title_is_chinese(client, measured):
    layout = client.get("/api/histograms", **CHINESE).json()["figure"]["layout"]
    assert layout["xaxis"]["title"]["text"] == "TTFT (ms) · 最快的在最上方"


@pytest.mark.django_db
def test_the_distribution_axis_title_stays_english_for_english_readers(client, measured):
    layout = client.get("/api/histograms", HTTP_ACCEPT_LANGUAGE="en").json()["figure"]["layout"]
    assert layout["xaxis"]["title"]["text"] == "TTFT (ms) · fastest at the top"


@pytest.mark.django_db
def test_the_time_axis_phases_and_legend_are_chinese(client, measured):
    timeseries = client.get("/api/timeseries", **CHINESE).json()["figure"]["layout"]
    assert timeseries["xaxis"]["title"]["text"] == "时间，UTC"
    phases = client.get("/api/phases", **CHINESE).json()["figure"]
    assert phases["layout"]["xaxis"]["title"]["text"] == "中位时间（ms）；各段为中位数之差"
    assert [trace["name"] for trace in phases["data"]] == [
        "DNS",
        "TCP 连接",
        "TLS",
        "服务器等待",
        "首个 token",
        "流式输出",
    ]


@pytest.mark.django_db
def test_the_map_hover_and_colour_bar_are_chinese(client, measured):
    data = client.get("/api/overview", **CHINESE).json()["figure"]["data"]
    regions = next(trace for trace in data if trace["meta"]["role"] == "regions")
    assert "样本数：20" in regions["text"][0]
    assert "错误率" in regions["text"][0]


@pytest.mark.django_db
def test_the_reason_for_no_data_is_chinese(client, measured):
    body = client.get("/api/histograms?metric=tls", **CHINESE).json()
    assert body["no_data"] == "没有 TLS：所选目标使用明文 HTTP，没有可测量的 TLS 握手。"


@pytest.mark.django_db
def test_a_bad_parameter_is_refused_in_chinese(client, measured):
    response = client.get("/api/table?metric=nope", **CHINESE)
    assert response.status_code == 400
    assert response.json()["error"].startswith("metric 必须是以下之一：")


@pytest.mark.django_db
def test_the_table_columns_are_chinese(client, measured):
    columns = client.get("/api/table?percentile=p95", **CHINESE).json()["columns"]
    labels = ["区域", "目标", "模型", "样本数", "错误（%）", "错过", "p50（ms）", "p95（ms）"]
    assert [c["label"] for c in columns] == labels
