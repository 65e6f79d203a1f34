"""A silence from the target or incident page: the form needs probes.add_silence and creates a window from now
(a duration, or an explicit end); the active silences are listed on both pages, and "end now" (with
probes.change_silence) ends one once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from probes.models import Silence
from tests.factories import IncidentFactory, SilenceFactory, TargetFactory

pytestmark = pytest.mark.django_db


def test_without_the_permission_there_is_no_form_and_the_post_is_refused(client, viewer):
    target = TargetFactory()
    html = client.get(reverse("target", args=[target.id])).content.decode()
    assert 'id="silence-form"' not in html
    response = client.post(reverse("target-silence", args=[target.id]), {"duration": "1h"})
    assert response.status_code == 403 and "probes.add_silence" in response.content.decode()
    assert not Silence.objects.exists()


def test_a_duration_silences_the_target_from_now(client, viewer, grant):
    grant(viewer, "probes.add_silence")
    incident = IncidentFactory()
    target = incident.target
    page = reverse("incident", args=[incident.id])
    assert 'id="silence-form"' in client.get(page).content.decode()

    before = datetime.now(UTC)
    response = client.post(
        reverse("target-silence", args=[target.id]), {"duration": "2h", "reason": "provider upgrade", "next": page}
    )
    after = datetime.now(UTC)
    assert response.status_code == 302 and response["Location"] == page
    silence = Silence.objects.get()
    assert silence.target == target and silence.created_by == viewer and silence.reason == "provider upgrade"
    assert before <= silence.starts_at <= after
    assert silence.ends_at - silence.starts_at == timedelta(hours=2)
    # Listed on both pages.
    for url in (page, reverse("target", args=[target.id])):
        html = client.get(url).content.decode()
        assert f'data-silence="{silence.id}"' in html and "provider upgrade" in html


def test_an_explicit_end_is_taken_as_utc_and_must_lie_ahead(client, viewer, grant):
    grant(viewer, "probes.add_silence")
    target = TargetFactory()
    end = (datetime.now(UTC) + timedelta(days=2)).replace(second=0, microsecond=0)
    response = client.post(
        reverse("target-silence", args=[target.id]), {"duration": "until", "until": end.strftime("%Y-%m-%d %H:%M")}
    )
    assert response.status_code == 302 and response["Location"] == reverse("target", args=[target.id])
    assert Silence.objects.get().ends_at == end

    past = client.post(reverse("target-silence", args=[target.id]), {"duration": "until", "until": "2020-01-01 10:00"})
    assert past.status_code == 400 and "The end must be in the future." in past.content.decode()
    missing = client.post(reverse("target-silence", args=[target.id]), {"duration": "until"})
    assert missing.status_code == 400
    assert Silence.objects.count() == 1


def test_next_never_leaves_the_site(client, viewer, grant):
    grant(viewer, "probes.add_silence")
    target = TargetFactory()
    response = client.post(
        reverse("target-silence", args=[target.id]), {"duration": "30m", "next": "https://evil.example/"}
    )
    assert response["Location"] == reverse("target", args=[target.id])


def test_end_now_needs_its_permission_and_ends_a_silence_once(client, viewer, grant):
    silence = SilenceFactory()
    end = reverse("silence-end", args=[silence.id])
    assert client.post(end).status_code == 403
    html = client.get(reverse("target", args=[silence.target_id])).content.decode()
    assert f'data-silence="{silence.id}"' in html and end not in html

    grant(viewer, "probes.change_silence")
    assert end in client.get(reverse("target", args=[silence.target_id])).content.decode()
    response = client.post(end)
    assert response.status_code == 302
    silence.refresh_from_db()
    assert silence.ends_at <= datetime.now(UTC)
    assert (
        f'data-silence="{silence.id}"' not in client.get(reverse("target", args=[silence.target_id])).content.decode()
    )
    again = client.post(end)
    assert again.status_code == 409 and "already ended" in again.content.decode()
