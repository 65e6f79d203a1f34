"""`manage.py central_key`: the central site's signing key (probes.fleet.central).

Without options, lists the central keys (ids, when made, until when they
sign; never a private key), making the first one if there is none.
`--rotate [--overlap 24h]` makes a new key; the keys in force keep signing
beside it until the overlap ends. Region hosts hold the central keys inside
their credentials, so every region needs a new credential
(`manage.py region_key SLUG`) before the overlap ends: a worker whose
credential holds only retired central keys refuses every run order.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandParser

from probes.management.commands.region_key import _overlap

_WHEN = "%Y-%m-%d %H:%M:%S UTC"


class Command(BaseCommand):
    help = (
        "Show the central signing key (made when there is none), or rotate it with --rotate [--overlap 24h]; "
        "the region credentials must then be issued again within the overlap."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rotate", action="store_true", help="make a new central key")
        parser.add_argument(
            "--overlap",
            default="24h",
            help="with --rotate: how long the earlier key keeps signing, e.g. 24h, 90m, 7d; 0 ends it at once "
            "(default 24h)",
        )

    def handle(self, *args, **opts) -> None:
        from probes.fleet import central
        from probes.models import CentralKey, Region

        now = datetime.now(UTC)
        if opts["rotate"]:
            overlap = _overlap(opts["overlap"])
            key = central.rotate(overlap, now)
            slugs = " ".join(Region.objects.order_by("slug").values_list("slug", flat=True)) or "SLUG"
            self.stderr.write(
                f"new central key {key.key_id}; the earlier key signs until {now + overlap:{_WHEN}}. "
                f"Issue every region a new credential before then (manage.py region_key SLUG, for {slugs}) "
                "and restart its workers: a worker whose credential holds no central key in force refuses "
                "every run order."
            )
        else:
            central.ensure_key(now)
        self.stdout.write(f"{'key id':<16}  {'created':<23}  {'signs until':<23}  in force")
        for key in CentralKey.objects.order_by("-created_at"):
            until = f"{key.retires_at:{_WHEN}}" if key.retires_at else "-"
            live = "yes" if key.retires_at is None or key.retires_at > now else "no"
            self.stdout.write(f"{key.key_id:<16}  {key.created_at:{_WHEN}}  {until:<23}  {live}")
