"""`manage.py ingest_worker`: store measurements in batches, take region
workers' heartbeats, run maintenance.

The same as:
    celery -A latency worker -Q ingest,maintenance,health -P threads -c 2 \
        --prefetch-multiplier 1000 -n ingest@%h
"""

import socket

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = (
        "Consume the ingest queue (batched inserts into Postgres), the health queue (region workers' heartbeats) "
        "and the maintenance queue (rollups, pruning)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--loglevel", default="INFO")
        parser.add_argument("--name", default=f"ingest@{socket.gethostname()}")

    def handle(self, *args, **opts):
        from probes.celery_app import site_app
        from probes.runtime import celery_health, health

        try:
            health.serve_from_env("consumer")
        except health.HealthConfigError as exc:
            raise CommandError(str(exc)) from None
        app = site_app()
        # The consumer loop's beat for /readyz, and a stop on SIGTERM within the runner's timeout: a batch in hand
        # is committed before its messages are acknowledged, or left unacknowledged and delivered again.
        celery_health.install(app)
        app.worker_main(
            [
                "worker",
                "-Q",
                "ingest,maintenance,health",
                "-P",
                "threads",
                "-c",
                "2",
                # Batches of up to 500 rows need that many messages in hand
                # before any is acknowledged (they are acked after commit).
                "--prefetch-multiplier",
                "1000",
                "-n",
                opts["name"],
                "-l",
                opts["loglevel"],
                "--without-gossip",
                "--without-mingle",
            ]
        )
