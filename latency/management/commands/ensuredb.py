"""Create the configured database if the server does not have it yet."""

import psycopg
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from psycopg import sql


class Command(BaseCommand):
    help = "Create the database named by DATABASE_URL when it does not exist."

    def handle(self, *args, **options):
        db = settings.DATABASES["default"]
        params = {
            "dbname": "postgres",
            "user": db["USER"] or None,
            "password": db["PASSWORD"] or None,
            "host": db["HOST"] or None,
            "port": db["PORT"] or None,
            "connect_timeout": 5,
        }
        params = {k: v for k, v in params.items() if v is not None}
        try:
            with psycopg.connect(**params, autocommit=True) as conn:
                exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [db["NAME"]]).fetchone()
                if exists:
                    self.stdout.write(f"database {db['NAME']!r} exists")
                    return
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db["NAME"])))
                self.stdout.write(f"created database {db['NAME']!r}")
        except psycopg.OperationalError as exc:
            where = db["HOST"] or "the local socket"
            raise CommandError(f"cannot reach PostgreSQL at {where}:{db['PORT'] or 5432}: {exc}".strip()) from None
