"""`manage.py scheduler`: the probe schedule.

The same as:
    celery -A latency beat -S probes.scheduling:SlotScheduler --max-interval 1

except on SIGTERM: celery beat raises SystemExit from its signal handler wherever the main thread is, which could
be between a tick's claiming of its slots (their once-per-slot keys) and their publishing, leaving slots claimed and
never sent. Here SIGTERM ends the loop after the tick under way (one second apart at most), and the process exits
with status 0; only a tick stuck for FORCE_S (a database or broker that stopped answering) is cut short.
"""

import logging
import os
import sys
import threading

from celery.apps.beat import Beat
from django.core.management.base import BaseCommand, CommandError

log = logging.getLogger(__name__)

# After SIGTERM, the most the tick under way may take before the process ends anyway: inside the stop timeout
# deploy/processes.toml gives the scheduler before SIGKILL.
FORCE_S = 7.0


def _force_exit() -> None:
    log.warning("scheduler: the tick under way is still running %g s after SIGTERM; exiting without it", FORCE_S)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


class StoppingBeat(Beat):
    """celery beat whose SIGTERM and SIGINT end the loop between ticks (see the module)."""

    def install_sync_handler(self, service) -> None:
        from celery import platforms

        from probes.runtime import health

        stopping = threading.Event()

        def stop(signum, frame) -> None:
            if stopping.is_set():
                return
            stopping.set()
            health.stopping()
            service.stop()  # Service.start's loop ends after the tick under way, then syncs and returns
            # A daemon: an exit in time must not wait for it.
            timer = threading.Timer(FORCE_S, _force_exit)
            timer.daemon = True
            timer.start()

        platforms.signals.update(SIGTERM=stop, SIGINT=stop)


class Command(BaseCommand):
    help = "Queue every due (probe, region) slot on its region's queue, plus rollups and pruning."

    def add_arguments(self, parser):
        parser.add_argument("--loglevel", default="INFO")

    def handle(self, *args, **opts):
        from probes.celery_app import site_app
        from probes.runtime import health

        try:
            health.serve_from_env("tick")
        except health.HealthConfigError as exc:
            raise CommandError(str(exc)) from None
        app = site_app()
        StoppingBeat(
            app=app, scheduler_cls="probes.scheduling:SlotScheduler", max_interval=1, loglevel=opts["loglevel"]
        ).run()
