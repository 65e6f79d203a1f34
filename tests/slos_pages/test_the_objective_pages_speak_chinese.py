"""The objective pages, the SLA report and a refused period read in Chinese for a Chinese browser: headings,
statuses, the rules about missed runs and silences, the charts' axes and the form's messages."""

from __future__ import annotations

import json
import re

import pytest

from tests.slos_pages.conftest import element, text

pytestmark = pytest.mark.django_db
CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-CN"}


def test_the_pages_and_a_refusal_read_in_chinese(signed_in, known):
    listing = signed_in.get("/slos/", **CHINESE).content.decode()
    assert "服务等级目标" in listing and "预算已耗尽" in listing
    page = signed_in.get(f"/slos/{known.objective.id}/", **CHINESE).content.decode()
    assert "错过的运行计为不合格。" in text(element(page, "p", 'id="slo-rules"'))
    charts = json.loads(re.search(r'<script id="slo-charts" type="application/json">(.*?)</script>', page, re.S)[1])
    assert charts["burn_down"]["layout"]["yaxis"]["title"]["text"] == "剩余错误预算（%）"
    report = signed_in.get(f"/slos/{known.objective.id}/report?period=2026-11", **CHINESE).content.decode()
    assert "SLA 报告" in report and "日历月 2026-11（UTC）。" in report
    refused = signed_in.get(f"/slos/{known.objective.id}/report?period=2026-13", **CHINESE)
    assert refused.status_code == 400
    assert "period 必须是 YYYY-MM 格式的日历月" in text(element(refused.content.decode(), "p", 'id="report-error"'))
