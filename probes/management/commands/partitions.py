"""`manage.py partitions [--ensure]`: list the daily partitions of raw measurements and real users' observations
(probes.partitions), with row estimates and sizes; `--ensure` first makes today's and
LATENCY_PARTITIONS_AHEAD_DAYS ahead's now, as the scheduler does hourly."""

from django.core.management.base import BaseCommand

from probes.partitions import ensure_scheduled, partitioned_tables, partitions


def _size(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1024:
            return f"{n:.0f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


class Command(BaseCommand):
    help = "List the daily partitions of raw measurements and observations; --ensure makes the days ahead now."

    def add_arguments(self, parser):
        parser.add_argument("--ensure", action="store_true", help="make today's and the days ahead first")

    def handle(self, *args, **opts):
        if opts["ensure"]:
            self.stdout.write(f"created {ensure_scheduled()} partitions")
        for spec in partitioned_tables():
            found = partitions(spec)
            self.stdout.write(f"{spec.table} (by {spec.column}): {len(found)} partitions")
            for part in found:
                # reltuples is -1 until the first ANALYZE (autovacuum's, on a new partition).
                rows = "?" if part.rows_estimate < 0 else f"~{part.rows_estimate}"
                day = str(part.day or "default")
                self.stdout.write(f"  {part.name:<40} {day:<10} {rows:>12} rows  {_size(part.size_bytes):>9}")
