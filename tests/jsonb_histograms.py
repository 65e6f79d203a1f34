"""For tests of migrations written while rollup histograms were jsonb (0020's and 0022's backfills): the rollup
tables as migration 0024 found them, for the with block, then converted as 0024 converts an installation's.
Inside the test's transaction, so nothing of it outlives the test."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

from django.db import connection

_MIGRATION = importlib.import_module("probes.migrations.0024_packed_histograms")
_DAILY = "probes_dailyrollup"


@contextmanager
def histograms_as_jsonb() -> Iterator[None]:
    editor = SimpleNamespace(connection=connection)
    with connection.cursor() as cur:
        # ALTER TABLE refuses to run with deferred foreign key checks pending: they run first.
        cur.execute("SET CONSTRAINTS ALL IMMEDIATE")
        # 0024 converts the daily rollups too, whose table 0033 dropped: an empty stand-in with the same columns.
        cur.execute(f"CREATE TABLE {_DAILY} (LIKE probes_hourlyrollup INCLUDING DEFAULTS)")
    _MIGRATION.to_jsonb(None, editor)
    yield
    _MIGRATION.to_packed(None, editor)
    with connection.cursor() as cur:
        cur.execute(f"DROP TABLE {_DAILY}")
