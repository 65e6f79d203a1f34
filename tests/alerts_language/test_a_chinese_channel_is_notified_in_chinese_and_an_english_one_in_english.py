"""An incident opened by the evaluator is notified to two channels of one rule through a real JSON webhook
(Apprise's json://): the channel set to 简体中文 gets its title and summary in Chinese, rendered from what the
summary says, and the channel left on the site's language gets them in English; with the site's language Chinese,
a channel left on it is notified in Chinese."""

from __future__ import annotations

import re

from probes.alerts import notify
from probes.alerts.models import Delivery
from tests.factories import NotificationChannelFactory

CHINESE_SUMMARY = (
    "从 Lagos 到 gpt-eu 的 TTFB p90 是其 7 天内同一时段基线的 ",
    "服务器等待未变，TCP 连接 +600 毫秒：是网络路径的问题，而非服务商",
    "。3 个区域中有 1 个：区域性。",
)


def english_words(text: str) -> list[str]:
    """Words of English in a text, other than the names, acronyms and units it quotes."""
    # The region's and target's names, acronyms, and the incident link (https://atlas.example.com/incidents/1/).
    quoted = {"Lagos", "test", "gpt", "TTFB", "TCP", "UTC", "https", "atlas", "example", "com", "incidents"}
    return [w for w in re.findall(r"[A-Za-z]{3,}", text) if w not in quoted]


def sent(channel, receiver, path: str) -> dict:
    assert notify.deliver(Delivery.objects.get(channel=channel).pk) == notify.SENT
    return next(post.body for post in receiver.wait_for_posts(1) if post.path == path)


def test_each_channel_is_notified_in_its_own_language(opened_incident, json_receiver, settings):
    settings.LATENCY_SITE_URL = "https://atlas.example.com"
    chinese = NotificationChannelFactory(name="值班群", url=json_receiver.apprise_url("/zh"), language="zh-hans")
    english = NotificationChannelFactory(name="Ops webhook", url=json_receiver.apprise_url("/en"))
    incident = opened_incident(chinese, english)

    zh = sent(chinese, json_receiver, "/zh")
    assert zh["title"] == "[告警中] TTFB over baseline：gpt-eu（区域性）"
    message = zh["message"]
    for part in CHINESE_SUMMARY:
        assert part in message, message
    assert "区域：Lagos (test)" in message
    assert "开始" in message
    assert english_words(message) == [], message

    assert notify.deliver(Delivery.objects.get(channel=english).pk) == notify.SENT
    en = next(post.body for post in json_receiver.wait_for_posts(2) if post.path == "/en")
    assert en["title"] == "[FIRING] TTFB over baseline: gpt-eu (regional)"
    assert en["message"].startswith(incident.summary)
    assert "server wait unchanged, TCP connect +600 ms: the network path, not the provider." in en["message"]


def test_a_channel_on_the_sites_language_follows_a_chinese_site(opened_incident, json_receiver, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    channel = NotificationChannelFactory(name="Ops webhook", url=json_receiver.apprise_url("/site"))
    opened_incident(channel)

    body = sent(channel, json_receiver, "/site")
    assert body["title"].startswith("[告警中]")
    for part in CHINESE_SUMMARY:
        assert part in body["message"], body["message"]
