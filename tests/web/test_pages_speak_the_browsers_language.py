"""A browser that asks for Chinese (Accept-Language) gets every page in
Simplified Chinese; one that asks for English, or for nothing we have,
gets English."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from probes.models import Measurement
from tests.factories import MeasurementFactory

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9,en;q=0.5"}
ENGLISH = {"HTTP_ACCEPT_LANGUAGE": "en-GB,en;q=0.9"}


@pytest.fixture
def public(settings):
    settings.LATENCY_PUBLIC_DASHBOARD = True


@pytest.fixture
def world(make_region, make_target, make_probe):
    lagos = make_region(slug="zh-lagos", name="Lagos", city="Lagos", country="NG")
    target = make_target(name="Quick Model API", model="quick-1")
    probe = make_probe(target=target, regions=[lagos])
    now = timezone.now()
    Measurement.objects.bulk_create(
        [
            MeasurementFactory.build(probe=probe, region=lagos, scheduled_for=now - timedelta(minutes=i + 1))
            for i in range(5)
        ]
    )
    return {"region": lagos, "target": target}


def pages(world) -> dict[str, str]:
    return {
        "overview": "/",
        "region": f"/regions/{world['region'].slug}/",
        "target": f"/targets/{world['target'].id}/",
        "where": "/where/",
        "login": "/accounts/login/",
    }


# Headings a reader sees first on each page, in each language.
HEADINGS = {
    "overview": ("区域 × 目标", "Regions × targets"),
    "region": ("从 Lagos 出发", "From Lagos"),
    "target": ("最近的测量", "Recent measurements"),
    "where": ("我的用户在哪里（加权）", "Where my users are, weighted"),
    "login": ("用户名", "User name"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("page", list(HEADINGS))
def test_a_chinese_browser_reads_each_page_in_chinese(client, public, world, page):
    response = client.get(pages(world)[page], **CHINESE)
    assert response.status_code == 200
    html = response.content.decode()
    assert '<html lang="zh-hans">' in html
    chinese, english = HEADINGS[page]
    assert chinese in html
    assert english not in html
    # The header's switch shows the current language as chosen.
    assert '<option value="zh-hans" lang="zh-hans" selected>简体中文</option>' in html


@pytest.mark.django_db
@pytest.mark.parametrize("page", list(HEADINGS))
def test_an_english_browser_reads_each_page_in_english(client, public, world, page):
    response = client.get(pages(world)[page], **ENGLISH)
    html = response.content.decode()
    assert '<html lang="en">' in html
    chinese, english = HEADINGS[page]
    assert english in html
    assert chinese not in html


@pytest.mark.django_db
def test_a_browser_asking_for_a_language_we_lack_reads_english(client, public, world):
    html = client.get("/", HTTP_ACCEPT_LANGUAGE="fr-FR,fr;q=0.9").content.decode()
    assert '<html lang="en">' in html
    assert "Regions × targets" in html


@pytest.mark.django_db
def test_the_not_found_page_speaks_chinese_to_a_chinese_browser(client, settings, public):
    settings.DEBUG = False
    response = client.get("/regions/nowhere/", **CHINESE)
    assert response.status_code == 404
    html = response.content.decode()
    assert '<html lang="zh-hans">' in html
    assert "页面不存在" in html
    assert "<code>/regions/nowhere/</code> 处没有页面" in html


@pytest.mark.django_db
def test_the_overview_loads_the_chinese_plotly_locale_only_for_chinese(client, public, world):
    chinese = client.get("/", **CHINESE).content.decode()
    english = client.get("/", **ENGLISH).content.decode()
    assert "plotly-locale-zh-cn" in chinese
    assert "plotly-locale-zh-cn" not in english
    # The script's strings come from the JavaScript catalog, loaded before it.
    assert chinese.index('src="/jsi18n/"') < chinese.index("js/dashboard")


@pytest.mark.django_db
def test_the_overview_tells_its_script_the_language(client, public, world):
    import json
    import re

    def config(html: str) -> dict:
        match = re.search(r'<script id="dashboard-config" type="application/json">(.*?)</script>', html, re.S)
        assert match
        return json.loads(match.group(1))

    chinese = config(client.get("/", **CHINESE).content.decode())
    english = config(client.get("/", **ENGLISH).content.decode())
    assert chinese["language"] == "zh-hans"
    assert english["language"] == "en"
    assert chinese["metrics"]["ttft"]["label"] == "首字时延 (TTFT)"
    assert english["metrics"]["ttft"]["label"] == "Time to first token"
