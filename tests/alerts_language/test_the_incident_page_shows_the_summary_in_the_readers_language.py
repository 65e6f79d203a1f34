"""An incident the evaluator opened while the site spoke English, and notified: its page read in Chinese (the
language chosen in the header, kept in the language cookie) shows the summary, and the timeline's lines, in
Chinese, rendered from what they say; read in English, the same words the incident stored. An incident stored
before its summary was kept as data shows its stored text in either language."""

from __future__ import annotations

import html
import re

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from probes.alerts import notify
from probes.alerts.models import Delivery
from tests.factories import IncidentFactory, NotificationChannelFactory

pytestmark = pytest.mark.django_db


def page_in(client, incident, language: str) -> str:
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    # The locale middleware activates the page's language in this thread and leaves it: restored after the page,
    # as a new request of a server would find it.
    with translation.override(settings.LANGUAGE_CODE):
        page = client.get(reverse("incident", args=[incident.pk]))
    assert page.status_code == 200
    return page.content.decode()


def summary_on_page(client, incident, language: str) -> str:
    text = re.search(r'<p id="incident-text">(.*?)</p>', page_in(client, incident, language), re.S).group(1)
    return html.unescape(text).strip()


def timeline_detail(client, incident, language: str, kind: str) -> str:
    row = re.search(rf'<tr data-kind="{kind}">(.*?)</tr>', page_in(client, incident, language), re.S).group(1)
    return html.unescape(re.search(r'<td class="wrap">(.*?)</td>', row, re.S).group(1)).strip()


def test_the_summary_reads_in_chinese_on_a_chinese_page(opened_incident, json_receiver, client, django_user_model):
    channel = NotificationChannelFactory(name="Ops webhook", url=json_receiver.apprise_url("/hook"))
    incident = opened_incident(channel)
    assert notify.deliver(Delivery.objects.get(channel=channel).pk) == notify.SENT
    client.force_login(django_user_model.objects.create_user(username="reader", password="a-long-test-password-47"))

    chinese = summary_on_page(client, incident, "zh-hans")
    assert chinese.startswith("从 Lagos 到 gpt-eu 的 TTFB p90 是其 7 天内同一时段基线的 ")
    assert "服务器等待未变，TCP 连接 +600 毫秒：是网络路径的问题" in chinese
    assert chinese.endswith("而非服务商。3 个区域中有 1 个：区域性。")
    assert not re.search(r"\b(from|is|its|baseline|unchanged|regions|regional|min)\b", chinese), chinese

    # The timeline's first line is the summary as it opened; the notification's line names the channel.
    assert timeline_detail(client, incident, "zh-hans", "opened") == chinese
    assert timeline_detail(client, incident, "zh-hans", "notified") == "已发送到 “Ops webhook” (json)。"

    assert summary_on_page(client, incident, "en") == incident.summary
    assert timeline_detail(client, incident, "en", "opened") == incident.summary
    assert timeline_detail(client, incident, "en", "notified") == "Sent to “Ops webhook” (json)."
    assert incident.summary.startswith("TTFB p90 from Lagos to gpt-eu is ")


def test_an_incident_without_summary_data_shows_its_stored_text(client, django_user_model):
    incident = IncidentFactory(summary="Stored before the summary was kept as data.", summary_data={})
    client.force_login(django_user_model.objects.create_user(username="reader", password="a-long-test-password-47"))

    assert summary_on_page(client, incident, "zh-hans") == "Stored before the summary was kept as data."
