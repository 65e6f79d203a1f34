"""The region's page in the admin has a "New credential" button: a POST
(CSRF, change permission) makes one and the answer shows it once, with its
key id, where it goes and when the earlier keys retire; that answer is not
cached, and nothing shows it again: not a reload of the page, not the
region's page, not its history, not the database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from probes.models import RegionKey
from probes.worker.protocol import CREDENTIAL_RE, Credential
from tests.factories import region_credential, sealed_results
from tests.trust.conftest import every_stored_text, ingest

CREDENTIAL = CREDENTIAL_RE


def credential_url(region) -> str:
    return reverse("admin:probes_region_credential", args=[region.pk])


def test_the_new_credential_is_shown_once_not_cached_and_nowhere_again(admin_client, region, payloads):
    earlier = region_credential(region)
    change_page = admin_client.get(reverse("admin:probes_region_change", args=[region.pk])).content.decode()
    assert credential_url(region) in change_page  # the button
    assert earlier.key_id in change_page  # the keys, read-only, by id

    form_page = admin_client.get(credential_url(region))
    assert form_page.status_code == 200
    assert 'name="overlap"' in form_page.content.decode() and not CREDENTIAL.search(form_page.content.decode())

    before = datetime.now(UTC)
    answer = admin_client.post(credential_url(region), {"overlap": "24h", "note": "lagos-1"})
    assert answer.status_code == 200
    assert "no-store" in answer["Cache-Control"] and "private" in answer["Cache-Control"]
    page = answer.content.decode()
    (text,) = set(CREDENTIAL.findall(page))
    credential = Credential.parse(text)
    new_key = RegionKey.objects.get(key_id=credential.key_id)
    assert (new_key.region, new_key.note, new_key.retires_at) == (region, "lagos-1", None)
    assert credential.key_id in page and "LATENCY_REGION_KEY" in page
    retires = RegionKey.objects.get(key_id=earlier.key_id).retires_at
    assert before + timedelta(hours=24) <= retires <= datetime.now(UTC) + timedelta(hours=24)
    assert f"{retires:%Y-%m-%d %H:%M:%S} UTC" in page
    assert ingest(sealed_results(region, payloads(1), credential)) == 1

    # Never again.
    pages = [
        admin_client.get(credential_url(region)),
        admin_client.get(reverse("admin:probes_region_change", args=[region.pk])),
        admin_client.get(reverse("admin:probes_region_history", args=[region.pk])),
        admin_client.get(reverse("admin:probes_regionkey_changelist")),
        admin_client.get(reverse("admin:probes_regionkey_change", args=[new_key.pk])),
    ]
    assert all(p.status_code == 200 for p in pages)
    secret = Credential.secret_part(text)
    for shown in [p.content.decode() for p in pages] + [every_stored_text()]:
        assert text not in shown and secret[:16] not in shown and secret[-16:] not in shown
    # The history names the key it added, by id.
    (entry,) = LogEntry.objects.filter(object_id=str(region.pk))
    assert credential.key_id in entry.get_change_message() and text not in entry.change_message


def test_overlap_at_once_retires_the_earlier_keys_now(admin_client, region, payloads):
    earlier = region_credential(region)
    page = admin_client.post(credential_url(region), {"overlap": "0"}).content.decode()
    assert CREDENTIAL.search(page)
    assert "No earlier credential of this region is still accepted." in page
    assert ingest(sealed_results(region, payloads(1), earlier)) == 0


def test_a_bad_overlap_issues_nothing(admin_client, region):
    answer = admin_client.post(credential_url(region), {"overlap": "forever"})
    assert answer.status_code == 200 and not CREDENTIAL.search(answer.content.decode())
    assert not RegionKey.objects.exists()


@pytest.fixture
def staff(django_user_model):
    def make(*perms: str) -> Client:
        user = django_user_model.objects.create_user(username=f"staff-{len(perms)}", password="x", is_staff=True)
        user.user_permissions.add(*Permission.objects.filter(codename__in=perms))
        client = Client(enforce_csrf_checks=True)
        client.force_login(user)
        return client

    return make


def test_only_who_may_change_the_region_can_make_a_credential_and_only_with_the_csrf_token(staff, region):
    viewer = staff("view_region")
    assert viewer.get(credential_url(region)).status_code == 403
    assert viewer.post(credential_url(region), {"overlap": "24h"}).status_code == 403
    change_page = viewer.get(reverse("admin:probes_region_change", args=[region.pk])).content.decode()
    assert credential_url(region) not in change_page

    editor = staff("view_region", "change_region")
    assert editor.post(credential_url(region), {"overlap": "24h"}).status_code == 403  # no CSRF token
    assert not RegionKey.objects.exists()
    form = editor.get(credential_url(region))
    token = form.cookies["csrftoken"].value
    answer = editor.post(credential_url(region), {"overlap": "24h", "csrfmiddlewaretoken": token})
    assert answer.status_code == 200 and CREDENTIAL.search(answer.content.decode())
    assert RegionKey.objects.filter(region=region).count() == 1


def test_region_keys_are_read_only_in_the_admin_and_can_be_retired(admin_client, region, payloads):
    credential = region_credential(region)
    key = RegionKey.objects.get(key_id=credential.key_id)
    assert admin_client.get(reverse("admin:probes_regionkey_add")).status_code == 403
    detail = admin_client.get(reverse("admin:probes_regionkey_change", args=[key.pk])).content.decode()
    assert 'name="_save"' not in detail and key.public_key in detail
    delete = admin_client.post(reverse("admin:probes_regionkey_delete", args=[key.pk]), {"post": "yes"})
    assert delete.status_code == 403
    assert RegionKey.objects.filter(pk=key.pk).exists()

    answer = admin_client.post(
        reverse("admin:probes_regionkey_changelist"),
        {"action": "retire_now", "_selected_action": [key.pk]},
        follow=True,
    )
    assert "Retired 1 key." in answer.content.decode()
    key.refresh_from_db()
    assert key.retires_at is not None and key.retires_at <= datetime.now(UTC)
    assert ingest(sealed_results(region, payloads(1), credential)) == 0
