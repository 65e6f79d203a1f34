"""The target page writes its times as the reader's language does:
ISO-like in English, 年月日 in Chinese."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import MeasurementFactory

STARTED = datetime(2026, 3, 7, 9, 5, 4, tzinfo=UTC)


@pytest.fixture
def target_page(settings, make_region, make_target, make_probe):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    region = make_region(slug="dt-lagos", name="Lagos")
    target = make_target(name="Dated API")
    probe = make_probe(target=target, regions=[region])
    MeasurementFactory(probe=probe, region=region, scheduled_for=STARTED)
    # A failure too, a minute later: the failures table writes its times the same way.
    MeasurementFactory(
        probe=probe,
        region=region,
        scheduled_for=STARTED + timedelta(minutes=1),
        outcome="timeout",
        ttft_ms=None,
        total_ms=None,
    )
    return f"/targets/{target.id}/"


@pytest.mark.django_db
def test_the_target_page_writes_dates_with_nian_yue_ri_in_chinese(client, target_page):
    html = client.get(target_page, HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "2026年3月7日 09:05:04" in html
    assert "2026年3月7日 09:06:04" in html
    assert "2026-03-07 09:0" not in html


@pytest.mark.django_db
def test_the_target_page_writes_sortable_dates_in_english(client, target_page):
    html = client.get(target_page, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "2026-03-07 09:05:04" in html
    assert "2026-03-07 09:06:04" in html
    assert "2026年" not in html
