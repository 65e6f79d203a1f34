"""Adding a source in the admin answers the POST with a page that shows its secret token, once: the token
authenticates, the database holds only its SHA-256, and neither the source's page, the list, the history, the
session, a message nor a cache keeps it. The page also shows the public browser key and the script tag."""

from __future__ import annotations

import hashlib

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.sessions.models import Session
from django.urls import reverse

from probes.models import IngestSource
from probes.realusers.sources import authenticate
from tests.realusers_admin.conftest import shown_token, source_data

pytestmark = pytest.mark.django_db


def test_the_token_is_shown_on_the_answer_to_the_add_and_never_again(admin_client):
    response = admin_client.post(reverse("admin:probes_ingestsource_add"), source_data())

    assert response.status_code == 200
    token = shown_token(response)
    source = IngestSource.objects.get(name="Shop assistant")
    assert authenticate(token) == source
    assert source.token_hash == hashlib.sha256(token.encode()).hexdigest()
    page = response.content.decode()
    assert source.browser_key in page
    assert f'data-key="{source.browser_key}"' in page and "/static/atlas-rum.js" in page
    assert "no-cache" in response["Cache-Control"] and "no-store" in response["Cache-Control"]

    # Nowhere else: any run of 8 characters of the token counts as a part of it.
    parts = {token[i : i + 8] for i in range(len("lat_"), len(token) - 8)}
    later = [
        admin_client.get(reverse("admin:probes_ingestsource_change", args=[source.pk])),
        admin_client.get(reverse("admin:probes_ingestsource_changelist")),
        admin_client.get(reverse("admin:probes_ingestsource_history", args=[source.pk])),
    ]
    kept = [r.content.decode() for r in later]
    kept += [str(e.change_message) + str(e.object_repr) for e in LogEntry.objects.all()]
    kept += [s.session_data + str(s.get_decoded()) for s in Session.objects.all()]
    kept += [str(list(IngestSource.objects.values()))]
    kept += [c.value for c in admin_client.cookies.values()]
    assert not [text for text in kept if any(part in text for part in parts)]
    assert all(r.status_code == 200 for r in later)
    assert source.browser_key in later[0].content.decode()


def test_the_origins_are_stored_one_per_line_normalised(admin_client):
    data = source_data(
        allowed_origins="https://Shop.Example.com/\n\nhttp://127.0.0.1:8000\nhttps://shop.example.com:443"
    )

    admin_client.post(reverse("admin:probes_ingestsource_add"), data)

    assert IngestSource.objects.get().allowed_origins == ["https://shop.example.com", "http://127.0.0.1:8000"]


def test_the_change_form_shows_the_origins_one_per_line_and_keeps_them(admin_client):
    admin_client.post(reverse("admin:probes_ingestsource_add"), source_data())
    source = IngestSource.objects.get()
    url = reverse("admin:probes_ingestsource_change", args=[source.pk])

    page = admin_client.get(url).content.decode()
    assert "https://shop.example.com\nhttp://127.0.0.1:8000</textarea>" in page

    response = admin_client.post(url, source_data(name="Shop", enabled=""))
    assert response.status_code == 302
    source.refresh_from_db()
    assert (source.name, source.enabled) == ("Shop", False)
    assert source.allowed_origins == ["https://shop.example.com", "http://127.0.0.1:8000"]
