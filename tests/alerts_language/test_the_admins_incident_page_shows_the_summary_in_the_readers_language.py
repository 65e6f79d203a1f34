"""The admin's page of an incident shows its summary and its timeline's lines in the reader's language, as the
incident page does, not the English they are stored in."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

pytestmark = pytest.mark.django_db


def admin_page(admin_client, incident, language: str) -> str:
    admin_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    # The locale middleware activates the request's language in this thread and leaves it there.
    with translation.override(settings.LANGUAGE_CODE):
        page = admin_client.get(reverse("admin:probes_incident_change", args=[incident.pk]))
    assert page.status_code == 200
    return page.content.decode()


def test_the_admin_shows_the_summary_in_chinese_to_a_chinese_reader(opened_incident, admin_client):
    incident = opened_incident()

    chinese = admin_page(admin_client, incident, "zh-hans")
    assert chinese.count("服务器等待未变，TCP 连接 +600 毫秒：是网络路径的问题") == 2  # the summary, the opening's line
    assert "the network path, not the provider" not in chinese

    english = admin_page(admin_client, incident, "en")
    assert english.count("server wait unchanged, TCP connect +600 ms: the network path, not the provider") == 2
