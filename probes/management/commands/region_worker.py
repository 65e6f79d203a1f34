"""`manage.py region_worker --region SLUG`: consume one region's probe queue
(or several regions', comma separated).

The same code path as the console script a region host runs
(`latency-atlas worker --region SLUG`, probes/worker/cli.py): the same
preflight (region, credential, broker, the central site's answer, clock) and
the same worker. Only the broker URL may come from the site's settings here
when the environment names none. It never opens the database.
"""

import os
import sys

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Run probes for one region (or several, comma separated): consumes probes.<region> queues."

    def add_arguments(self, parser):
        parser.add_argument("--region", required=True, help="region slug, e.g. af-lagos (comma separated for several)")
        parser.add_argument("--concurrency", type=int, default=100, help="probes in flight at once")
        parser.add_argument("--loglevel", default="INFO")
        parser.add_argument(
            "--hello-timeout", type=float, default=15.0, help="seconds to wait for the central site's first answer"
        )

    def handle(self, *args, **opts):
        from probes.worker.cli import run_worker

        env = dict(os.environ)
        if not any(env.get(name, "").strip() for name in ("LATENCY_BROKER_URL", "CELERY_BROKER_URL", "REDIS_URL")):
            env["LATENCY_BROKER_URL"] = settings.CELERY_BROKER_URL
        env.setdefault("LATENCY_VISIBILITY_TIMEOUT", str(settings.LATENCY_VISIBILITY_TIMEOUT))
        code = run_worker(
            region=opts["region"],
            concurrency=opts["concurrency"],
            loglevel=opts["loglevel"],
            hello_timeout_s=opts["hello_timeout"],
            env=env,
        )
        if code:
            # The one line saying why was printed already; only the status is left to give.
            sys.exit(code)
        if code is None:
            raise CommandError("the region worker stopped without a status")
