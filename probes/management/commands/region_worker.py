"""`manage.py region_worker --region SLUG`: consume one region's probe queue.

The same as:
    celery -A latency worker -Q probes.SLUG -P threads -c N -n region-SLUG@%h
It needs only the broker URL, its region and the providers' keys in its
environment; it never opens the database.
"""

import re
import socket

from django.core.management.base import BaseCommand, CommandError

from probes.scheduling import region_queue

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,49}$")


def worker_argv(regions: list[str], concurrency: int, loglevel: str) -> list[str]:
    queues = ",".join(region_queue(r) for r in regions)
    name = "region-" + "+".join(regions) if len(regions) <= 3 else f"region-{len(regions)}"
    return [
        "worker",
        "-Q",
        queues,
        # Threads: each run waits on the shared probe event loop, so a thread
        # is cheap and N threads mean N probes in flight.
        "-P",
        "threads",
        "-c",
        str(concurrency),
        "-n",
        f"{name}@{socket.gethostname()}",
        "-l",
        loglevel,
        "--without-gossip",
        "--without-mingle",
    ]


class Command(BaseCommand):
    help = "Run probes for one region (or several, comma separated): consumes probes.<region> queues."

    def add_arguments(self, parser):
        parser.add_argument("--region", required=True, help="region slug, e.g. af-lagos (comma separated for several)")
        parser.add_argument("--concurrency", type=int, default=100, help="probes in flight at once")
        parser.add_argument("--loglevel", default="INFO")

    def handle(self, *args, **opts):
        regions = [r.strip() for r in opts["region"].split(",") if r.strip()]
        bad = [r for r in regions if not SLUG.match(r)]
        if not regions or bad:
            raise CommandError(f"--region must be region slugs such as af-lagos (got {opts['region']!r})")
        if not 1 <= opts["concurrency"] <= 2000:
            raise CommandError("--concurrency must be between 1 and 2000")
        from latency.celery import app

        app.worker_main(worker_argv(regions, opts["concurrency"], opts["loglevel"]))
