"""A transactional test ends with Django's flush, which the suite makes a DELETE of every table instead of one
TRUNCATE (devtools/test_databases.py). That is only sound while no foreign key is checked row by row and no trigger
acts on a delete; and it must leave every table empty, linked rows included, with the schema as it was."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from probes.models import Measurement, Region, Target
from tests.factories import IncidentFactory, MeasurementFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_foreign_key_is_checked_at_commit_and_no_trigger_acts_on_rows():
    with connection.cursor() as cur:
        cur.execute(
            "SELECT conrelid::regclass::text, conname FROM pg_constraint "
            "WHERE contype = 'f' AND NOT (condeferrable AND condeferred)"
        )
        assert cur.fetchall() == []
        cur.execute("SELECT tgrelid::regclass::text, tgname FROM pg_trigger WHERE NOT tgisinternal")
        assert cur.fetchall() == []


def test_a_flush_empties_linked_tables_in_any_order():
    MeasurementFactory.create_batch(3)
    IncidentFactory()
    assert Measurement.objects.count() == 3
    assert Region.objects.exists() and Target.objects.exists()
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM pg_class")
        relations = cur.fetchone()[0]

    # As a transactional test's end calls it (flush's own default resets the sequences, by the original statement).
    call_command("flush", verbosity=0, interactive=False, reset_sequences=False)

    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with connection.cursor() as cur:
        left = {}
        for table in tables:
            cur.execute(f'SELECT count(*) FROM "{table}"')
            left[table] = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM pg_class")
        assert cur.fetchone()[0] == relations
    # flush's post_migrate handlers put content types and permissions back; nothing else holds a row.
    assert {t: n for t, n in left.items() if n and t not in ("django_content_type", "auth_permission")} == {}
