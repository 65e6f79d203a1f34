"""/models/ and /models/<id>/: sign in first, like the dashboard's pages; the list links every group; a group's
page shows its targets' leaderboard, and a bad parameter is a 400 that names it on the page."""

from __future__ import annotations

import pytest

from tests.factories import ModelGroupFactory, TargetFactory

pytestmark = pytest.mark.django_db


def test_the_pages_redirect_to_the_sign_in(client):
    group = ModelGroupFactory()
    for url in ("/models/", f"/models/{group.id}/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_list_links_each_group_and_its_page_lists_its_targets(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("reader"))
    group = ModelGroupFactory(
        name="Llama 3.1 70B", targets=[TargetFactory(name="Groq"), TargetFactory(name="Together")]
    )
    TargetFactory(name="Elsewhere")

    listing = client.get("/models/").content.decode()
    assert f'href="/models/{group.id}/"' in listing and 'id="nav-models"' in listing

    page = client.get(f"/models/{group.id}/", {"window": "24h"})
    assert page.status_code == 200
    names = [row["target_name"] for row in page.context["rows"]]
    assert sorted(names) == ["Groq", "Together"]
    assert all(row["n"] == 0 for row in page.context["rows"])

    bad = client.get(f"/models/{group.id}/", {"region": "nowhere"})
    assert bad.status_code == 400
    assert 'id="leaderboard-error"' in bad.content.decode()
    assert client.get("/models/999999/").status_code == 404
