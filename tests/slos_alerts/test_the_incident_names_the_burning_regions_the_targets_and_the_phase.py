"""An objective over two targets, measured from three regions: in the last hour every call from Lagos and Nairobi
to gpt-eu waits 1.1 s more at the provider, while Frankfurt and the other target stay good. The page names Lagos
and Nairobi (not Frankfurt), gpt-eu (not gpt-us), and server wait as the phase that moved, against a week of
ordinary calls; the incident is filed under gpt-eu. Its pages (the list and its own) show it as the objective's
page, in English and, rendered from the same data, in Chinese."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from probes.models import Incident
from tests.factories import ProbeFactory, TargetFactory
from tests.slos_alerts.conftest import NOW, at


@pytest.fixture
def burning(scene):
    lagos, nairobi, frankfurt = scene.regions
    other = TargetFactory(name="gpt-us")
    other_probe = ProbeFactory(target=other, regions=[lagos], interval_seconds=60)
    scene.objective.targets.add(other)
    for i, region in enumerate(scene.regions):
        scene.calls(region, NOW - timedelta(days=7), at(-120), good=1000, bad=0, seed=10 + i)
    scene.calls(lagos, at(-60), at(0), good=0, bad=60, seed=1)
    scene.calls(nairobi, at(-60), at(0), good=0, bad=60, seed=2)
    scene.calls(frankfurt, at(-60), at(0), good=60, bad=0, seed=3)
    scene.probe, kept = other_probe, scene.probe
    scene.target = other
    scene.calls(lagos, at(-60), at(0), good=60, bad=0, seed=4)
    scene.probe, scene.target = kept, kept.target
    scene.count()
    return scene


def page(client, path: str, language: str) -> str:
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    with translation.override(settings.LANGUAGE_CODE):
        answer = client.get(path)
    assert answer.status_code == 200
    return html.unescape(answer.content.decode())


def test_the_page_names_lagos_nairobi_gpt_eu_and_server_wait(burning):
    scene = burning
    assert scene.run(0).opened == 1

    incident = Incident.objects.get()
    assert incident.target == scene.target
    assert sorted(r.city for r in incident.regions.all()) == ["Lagos", "Nairobi"]
    assert incident.phase == "server_wait"
    data = incident.summary_data
    assert (data["places"], data["targets"], data["breaching"], data["measured"]) == (
        ["Lagos", "Nairobi"],
        ["gpt-eu"],
        2,
        3,
    )
    assert "in Lagos and Nairobi on gpt-eu; " in incident.summary
    assert "server wait +1.1 s" in incident.summary and "queueing at the provider, not the network" in incident.summary
    assert incident.summary.endswith(" 2 of 3 regions: regional.")


def test_the_incident_pages_show_the_objectives_page_in_the_readers_language(burning, client, django_user_model):
    scene = burning
    scene.run(0)
    incident = Incident.objects.get()
    client.force_login(django_user_model.objects.create_user(username="reader", password="a-long-test-password-47"))

    listed = page(client, reverse("incidents"), "en")
    row = re.search(rf'<tr data-incident="{incident.pk}">(.*?)</tr>', listed, re.S).group(1)
    assert "chat 99" in row and "(objective: page)" in row and "gpt-eu" in row
    # The peak is the objective's burn over the hour: 120 bad of 240 calls, 50x.
    assert re.search(r">50.0x\s*</td>", row), row

    english = page(client, reverse("incident", args=[incident.pk]), "en")
    assert re.search(r'id="incident-severity">page<', english)
    text = re.search(r'<p id="incident-text">(.*?)</p>', english, re.S).group(1).strip()
    assert text == incident.summary

    chinese = page(client, reverse("incident", args=[incident.pk]), "zh-hans")
    text = re.search(r'<p id="incident-text">(.*?)</p>', chinese, re.S).group(1).strip()
    assert "chat 99" in text and "Lagos" in text and "gpt-eu" in text
    assert "服务器等待 +1.1 秒" in text, text
    assert re.findall(r"[A-Za-z]{4,}", text.replace("chat", "").replace("Lagos", "").replace("Nairobi", "")) == []
    assert re.search(r'id="incident-severity">[^<]*[\u4e00-\u9fff]', chinese)
