"""`manage.py create_ingest_source NAME --allowed-origin ...` prints exactly two lines, `token: <secret>` and
`browser-key: <public key>`; the token authenticates the new source, the key is its browser key, and the
origins are stored normalised."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from probes.models import IngestSource
from probes.realusers.sources import authenticate, by_browser_key

pytestmark = pytest.mark.django_db


def test_the_command_prints_the_token_and_the_browser_key():
    out = StringIO()

    call_command(
        "create_ingest_source", "shop", "--allowed-origin", "https://Shop.example.com/",
        "--allowed-origin", "http://127.0.0.1:8000", stdout=out,
    )  # fmt: skip

    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("token: lat_") and lines[1].startswith("browser-key: pk_")
    token, key = lines[0].removeprefix("token: "), lines[1].removeprefix("browser-key: ")
    source = IngestSource.objects.get(name="shop")
    assert authenticate(token) == source and by_browser_key(key) == source
    assert source.allowed_origins == ["https://shop.example.com", "http://127.0.0.1:8000"]
    assert source.enabled


def test_without_origins_the_source_takes_otlp_only():
    call_command("create_ingest_source", "batch-jobs", stdout=StringIO())

    assert IngestSource.objects.get(name="batch-jobs").allowed_origins == []
