"""A page reached with a custom since/until range (a link from an incident or an export) keeps that range when
its filters are submitted again: the window picker offers "custom" and holds the range in hidden fields. The
region page reads no range, so it never offers one."""

from __future__ import annotations

import re

import pytest

from tests.factories import ModelGroupFactory, RegionFactory, TargetFactory

pytestmark = pytest.mark.django_db

RANGE = {"window": "custom", "since": "2026-03-01T10:00:00Z", "until": "2026-03-01T12:00:00Z"}


def page(client, django_user_model, url, params):
    client.force_login(django_user_model.objects.create_user("reader"))
    response = client.get(url, params)
    assert response.status_code == 200, response.content.decode()[:500]
    return response.content.decode()


def hidden(html: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(since|until)" value="([^"]+)">', html))


def test_the_model_group_page_keeps_the_range_in_its_form(client, django_user_model):
    group = ModelGroupFactory(targets=[TargetFactory()])
    html = page(client, django_user_model, f"/models/{group.id}/", RANGE)
    form = html.split('id="leaderboard-form"', 1)[1].split("</form>", 1)[0]
    assert '<option value="custom" selected>' in form
    assert hidden(form) == {"since": RANGE["since"], "until": RANGE["until"]}


def test_both_forms_of_the_where_page_keep_the_range(client, django_user_model):
    html = page(client, django_user_model, "/where/", RANGE)
    forms = re.findall(r"<form[^>]*>.*?</form>", html, flags=re.S)
    with_range = [f for f in forms if hidden(f)]
    assert len(with_range) == 2
    assert all(hidden(f) == {"since": RANGE["since"], "until": RANGE["until"]} for f in with_range)


def test_a_plain_window_offers_no_custom_choice(client, django_user_model):
    group = ModelGroupFactory(targets=[TargetFactory()])
    html = page(client, django_user_model, f"/models/{group.id}/", {"window": "24h"})
    assert 'value="custom"' not in html and not hidden(html)


def test_the_region_page_never_offers_a_range(client, django_user_model):
    region = RegionFactory()
    html = page(client, django_user_model, f"/regions/{region.slug}/", {"window": "24h"})
    assert 'value="custom"' not in html and not hidden(html)
