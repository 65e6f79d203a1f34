"""create_ingest_source stops with a clear error, and makes nothing, for a name already taken or an origin that
is not one; it prints no token then."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from probes.models import IngestSource
from tests.factories import IngestSourceFactory

pytestmark = pytest.mark.django_db


def test_a_taken_name_is_refused():
    IngestSourceFactory(name="shop")
    out = StringIO()

    with pytest.raises(CommandError, match="'shop' already exists"):
        call_command("create_ingest_source", "shop", stdout=out)

    assert IngestSource.objects.count() == 1
    assert out.getvalue() == ""


@pytest.mark.parametrize("origin", ["https://shop.example.com/path", "javascript:alert(1)", "shop.example.com"])
def test_a_bad_origin_is_refused(origin):
    out = StringIO()

    with pytest.raises(CommandError, match=r"--allowed-origin: .* is not an origin"):
        call_command("create_ingest_source", "shop", "--allowed-origin", origin, stdout=out)

    assert not IngestSource.objects.exists()
    assert out.getvalue() == ""
