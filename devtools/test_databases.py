"""Test databases for pytest-xdist workers: migrated once per run, copied for each worker.

Each worker used to migrate a database of its own: every migration ran once per worker, side by side on the same
cores, before the worker's first test. Now the first worker to take the lock migrates a template database for
the run, and each worker (that one too) takes a copy of it with `CREATE DATABASE ... TEMPLATE`, which the server
does as a file copy. The copy has the name pytest-django gives the worker's database (`test_<name>_gw<N>`), so
nothing downstream of the setup changes; teardown drops it as before, and the controller drops the template at
the end of the session (tests/conftest.py).

The template is stamped with the run's id (pytest-xdist's `testrunuid`): a template a broken run left behind is
migrated afresh, never reused.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql

# pg_advisory_lock key held while the template is made or copied: the server forbids copying a database another
# session is connected to, and two workers must not migrate one template side by side.
TEMPLATE_LOCK = 0x4C41_5445  # "LATE"
# The run id the controller gives its workers (through their environment) and stamps the template with.
RUN_VARIABLE = "LATENCY_TEST_TEMPLATE_RUN"


def test_database_base(settings_dict: dict) -> str:
    """The name pytest-django suffixes per worker: TEST NAME, or test_<NAME> (django.test's rule)."""
    return settings_dict.get("TEST", {}).get("NAME") or f"test_{settings_dict['NAME']}"


def template_name(base: str) -> str:
    return f"{base}_template"


@contextmanager
def maintenance(settings_dict: dict) -> Iterator[psycopg.Connection]:
    """An autocommit connection to the server's `postgres` database, with the settings' host, port and user."""
    params = {
        "dbname": "postgres",
        "host": settings_dict.get("HOST") or None,
        "port": settings_dict.get("PORT") or None,
        "user": settings_dict.get("USER") or None,
        "password": settings_dict.get("PASSWORD") or None,
    }
    with psycopg.connect(**{k: v for k, v in params.items() if v is not None}, autocommit=True) as conn:
        yield conn


def _stamp(conn: psycopg.Connection, name: str) -> str | None:
    """The comment on database `name` (the run id it was made for); None when there is no such database."""
    row = conn.execute(
        "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = %s", [name]
    ).fetchone()
    return None if row is None else row[0]


def ensure_template(connection, template: str, run_id: str, verbosity: int = 0) -> None:
    """Migrate `template` for run `run_id` unless it is made already; the caller holds TEMPLATE_LOCK."""
    settings_dict = connection.settings_dict
    with maintenance(settings_dict) as admin:
        if _stamp(admin, template) == run_id:
            return
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(template)))
        test_name = settings_dict["TEST"].get("NAME")
        settings_dict["TEST"]["NAME"] = template
        try:
            connection.creation.create_test_db(verbosity=verbosity, autoclobber=True, serialize=False)
        finally:
            settings_dict["TEST"]["NAME"] = test_name
        # The server copies no database another session is connected to.
        connection.close()
        admin.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(template), sql.Literal(run_id)))


@contextmanager
def template_lock(settings_dict: dict) -> Iterator[None]:
    with maintenance(settings_dict) as admin:
        admin.execute("SELECT pg_advisory_lock(%s)", [TEMPLATE_LOCK])
        try:
            yield
        finally:
            admin.execute("SELECT pg_advisory_unlock(%s)", [TEMPLATE_LOCK])


def setup_worker_database(connection, worker_id: str, run_id: str, verbosity: int = 0) -> list[tuple]:
    """Give this worker its copy of the run's template (migrating the template first when nobody has), point
    `connection` at the copy and return the old configuration `django.test.utils.teardown_databases` takes."""
    from django.conf import settings

    settings_dict = connection.settings_dict
    old_name = settings_dict["NAME"]
    worker_db = settings_dict["TEST"]["NAME"]  # pytest-django's per-worker name, set before this runs
    template = template_name(worker_db.removesuffix(f"_{worker_id}"))
    with template_lock(settings_dict):
        ensure_template(connection, template, run_id, verbosity)
        with maintenance(settings_dict) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(worker_db)))
            admin.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(worker_db), sql.Identifier(template))
            )
    connection.close()
    settings.DATABASES[connection.alias]["NAME"] = worker_db
    settings_dict["NAME"] = worker_db
    connection.ensure_connection()
    return [(connection, old_name, True)]


def start_template(env: dict[str, str]) -> subprocess.Popen:
    """The controller starts migrating the run's template at once, in a process of its own, while pytest-xdist
    starts its workers and they collect the suite; the first worker to need it waits on the lock. Its output is
    dropped: should it fail, the stamp is missing and the first worker migrates the template itself, in view."""
    return subprocess.Popen(
        [sys.executable, "-m", "devtools.test_databases", "--run", env[RUN_VARIABLE]],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def drop_template(settings_dict: dict) -> None:
    """Drop the run's template (the controller, once every worker has ended)."""
    template = template_name(test_database_base(settings_dict))
    with maintenance(settings_dict) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(template)))


def deleting_sql_flush(original):
    """A PostgreSQL `sql_flush` that empties the tables with DELETE rather than one TRUNCATE.

    A transactional test ends with Django's flush. TRUNCATE gives every table, partition and index a new file,
    several hundred relations here, whatever they hold; a test leaves a few rows in a few tables, and DELETE of
    every table costs a small share of that. Every foreign key is DEFERRABLE INITIALLY DEFERRED (Django makes them
    so, and a test of the schema would show another), and flush runs its statements in one transaction, so the
    order of the tables does not matter. Sequences are reset, when a test asks, by the original statement."""

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or not tables:
            return original(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return [f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};" for table in tables]

    return sql_flush


def main() -> None:
    """`python -m devtools.test_databases --run ID`: migrate the template of the test settings for run ID."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--run", required=True)
    args = parser.parse_args()
    import django

    django.setup()
    from django.db import connections

    connection = connections["default"]
    with template_lock(connection.settings_dict):
        ensure_template(connection, template_name(test_database_base(connection.settings_dict)), args.run)


if __name__ == "__main__":
    main()
