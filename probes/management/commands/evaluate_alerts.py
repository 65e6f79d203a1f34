"""`manage.py evaluate_alerts [--now ISO-TIME]`: one evaluation pass of every
enabled alert rule (the central beat runs the same pass every minute).

--now evaluates as if it were that moment (tests, backfills): windows,
baselines, silences and the hysteresis all read that time, and incidents
are stamped with it. Deliveries it opens are queued to the broker as the
scheduled pass queues them."""

from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandError

from probes.alerts.evaluate import run_pass
from probes.timeparse import parse_when


class Command(BaseCommand):
    help = "Run one evaluation pass of the alert rules, now or as if at --now."

    def add_arguments(self, parser):
        parser.add_argument("--now", default="", help="ISO 8601 time (UTC unless it says otherwise); default now")

    def handle(self, *args, **opts):
        clock = datetime.now(UTC)
        try:
            now = parse_when(opts["now"], clock) if opts["now"] else clock
        except ValueError as exc:
            raise CommandError(f"--now: {exc}") from None
        report = run_pass(now)
        self.stdout.write(f"alert pass at {now.isoformat(timespec='seconds')}: {report}")
