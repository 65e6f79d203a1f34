"""Helpers for the CSV export tests.

The exports read on a connection of their own (not Django's), so their tests
use transactional_db: rows must be committed to be seen."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import Permission

from probes.models import Measurement
from tests.factories import MeasurementFactory

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
# The large exports (memory, concurrency): ROWS rows, one every STEP from T0.
ROWS = 100_000
STEP = timedelta(seconds=1)


def viewer(django_user_model, username: str = "exporter", *, permitted: bool = True):
    user = django_user_model.objects.create_user(username=username, password="a-long-test-password-5512")
    if permitted:
        user.user_permissions.add(Permission.objects.get(codename="view_measurement"))
    return user


def measurement(probe, region, at: datetime, **fields) -> Measurement:
    """An unsaved successful measurement at `at` (every phase present)."""
    return MeasurementFactory.build(probe=probe, region=region, scheduled_for=at, **fields)


def series(probe, region, start: datetime, count: int, step=timedelta(minutes=1), **fields) -> list[Measurement]:
    return [measurement(probe, region, start + step * i, **fields) for i in range(count)]


async def download(client, url: str, **params):
    """(response, body text) of a GET, reading a streamed body to its end."""
    response = await client.get(url, params)
    if getattr(response, "streaming", False):
        body = b"".join([chunk async for chunk in response.streaming_content])
    else:
        body = response.content
    return response, body.decode()


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def header(text: str) -> list[str]:
    return next(csv.reader(io.StringIO(text)))


@pytest.fixture(autouse=True)
async def close_async_thread_connections():
    """Async views reach the ORM from asgiref's worker thread, whose
    persistent connection would otherwise keep the test database from being
    dropped at the end of the run."""
    yield
    from asgiref.sync import sync_to_async
    from django.db import connections

    await sync_to_async(connections.close_all)()
