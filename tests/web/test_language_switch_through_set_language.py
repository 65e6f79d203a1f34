"""The header's language switch posts to Django's set_language view: the
choice sticks for the next pages, whatever the browser asks for, and
switching back gives English."""

from __future__ import annotations

import re

import pytest
from django.test import Client


@pytest.fixture
def public(settings):
    settings.LATENCY_PUBLIC_DASHBOARD = True


def switch_form(html: str) -> dict[str, str]:
    """The header's form: its action and hidden fields, as a browser would post them."""
    form = re.search(r'<form class="inline language-switch" method="post" action="([^"]+)">(.*?)</form>', html, re.S)
    assert form, "the header has no language switch"
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.group(2)))
    return {"action": form.group(1), **fields}


@pytest.mark.django_db
def test_choosing_chinese_in_the_header_makes_the_next_page_chinese_and_english_brings_it_back(public):
    client = Client(enforce_csrf_checks=True)
    page = client.get("/where/", HTTP_ACCEPT_LANGUAGE="en")
    html = page.content.decode()
    assert '<html lang="en">' in html
    form = switch_form(html)
    assert form["action"] == "/i18n/setlang/"
    assert form["next"] == "/where/"

    response = client.post(
        form["action"],
        {"csrfmiddlewaretoken": form["csrfmiddlewaretoken"], "next": form["next"], "language": "zh-hans"},
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert response.status_code == 302
    assert response["Location"] == "/where/"

    html = client.get("/where/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<html lang="zh-hans">' in html
    assert "我的用户在哪里（加权）" in html

    form = switch_form(html)
    client.post(
        form["action"],
        {"csrfmiddlewaretoken": form["csrfmiddlewaretoken"], "next": form["next"], "language": "en"},
    )
    html = client.get("/where/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert '<html lang="en">' in html
    assert "Where my users are, weighted" in html


@pytest.mark.django_db
def test_the_switch_refuses_a_post_without_its_csrf_token(public):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/i18n/setlang/", {"next": "/", "language": "zh-hans"})
    assert response.status_code == 403
    assert '<html lang="en">' in client.get("/").content.decode()
