"""A beacon whose browser key names no source, names a disabled one, or is the source's secret token instead,
is refused 403 and stores nothing; the answer names no source."""

from __future__ import annotations

import pytest

from probes.models import IngestSource, Observation

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("key", ["pk_nosuchkey0000000000000000", "nonsense", "x" * 60])
def test_an_unknown_key_is_refused(app_source, send_beacon, key):
    response = send_beacon(key)

    assert response.status_code == 403
    assert app_source.name.encode() not in response.content
    assert not Observation.objects.exists()


def test_the_secret_token_is_no_browser_key(app_source, send_beacon):
    assert send_beacon(app_source.token).status_code == 403
    assert not Observation.objects.exists()


def test_a_disabled_source_takes_no_beacons(app_source, send_beacon):
    IngestSource.objects.filter(pk=app_source.pk).update(enabled=False)

    assert send_beacon(app_source.browser_key).status_code == 403
    assert not Observation.objects.exists()
