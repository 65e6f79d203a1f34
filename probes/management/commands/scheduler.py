"""`manage.py scheduler`: the probe schedule.

The same as:
    celery -A latency beat -S probes.scheduling:SlotScheduler --max-interval 1
"""

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Queue every due (probe, region) slot on its region's queue, plus rollups and pruning."

    def add_arguments(self, parser):
        parser.add_argument("--loglevel", default="INFO")

    def handle(self, *args, **opts):
        from probes.celery_app import site_app

        site_app().start(
            ["beat", "-S", "probes.scheduling:SlotScheduler", "--max-interval", "1", "-l", opts["loglevel"]]
        )
