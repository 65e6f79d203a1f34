"""`manage.py rollup [--since WHEN] [--until WHEN]`: build or rebuild hourly
rollups from raw rows (the schedule runs the same code)."""

from datetime import UTC, datetime, timedelta

from django.core.management.base import BaseCommand, CommandError

from probes.rollups import floor_hour, rebuild_range
from probes.timeparse import parse_when


class Command(BaseCommand):
    help = "Build or rebuild hourly rollups of a time range from raw measurements."

    def add_arguments(self, parser):
        parser.add_argument("--since", default="48h", help="ISO 8601 time or relative (24h, 7d); default 48h")
        parser.add_argument("--until", default="", help="ISO 8601 time or relative; default now")
        parser.add_argument(
            "--workers", type=int, default=2, help="days built at once, each on its own connection; default 2"
        )

    def handle(self, *args, **opts):
        now = datetime.now(UTC)
        try:
            since = parse_when(opts["since"], now)
        except ValueError as exc:
            raise CommandError(f"--since: {exc}") from None
        try:
            until = parse_when(opts["until"], now) if opts["until"] else now
        except ValueError as exc:
            raise CommandError(f"--until: {exc}") from None
        if since >= until:
            raise CommandError("--since must be before --until")
        if until - since > timedelta(days=3660):
            raise CommandError("the range is longer than ten years; give a narrower one")
        hours, rows = rebuild_range(floor_hour(since), until, workers=opts["workers"])
        self.stdout.write(
            f"rolled up {hours} hours ({rows} probe-region rollups)"
            f" from {floor_hour(since).isoformat()} to {until.isoformat()}"
        )
