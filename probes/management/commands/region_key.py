"""`manage.py region_key SLUG`: a new credential for a region's workers.

Prints the credential, and only it, on stdout, so that
    KEY=$(manage.py region_key af-lagos)
captures it; says on stderr which key it is and until when the region's
earlier keys are accepted (--overlap, 24h by default; 0 ends them at once).
The site keeps only the public key: this is the one time the credential is
shown. `--list` shows keys without secrets, `--retire KEY_ID` ends one now.

`--output FILE` writes the credential to FILE instead (mode 0600, replaced
whole or not at all), where a container's worker reads it through
LATENCY_REGION_KEY_FILE; with `--keep`, a FILE already holding a credential the
site still accepts for the region is left as it is and nothing is issued, so a
set-up step run on every start (deploy/compose.yaml) issues one key, not one
per start.
"""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from probes.fleet.keys import DEFAULT_OVERLAP, issue_key, refusal_of
from probes.timeparse import parse_duration

_WHEN = "%Y-%m-%d %H:%M:%S UTC"


# An old credential left working for more than this is not an overlap.
MAX_OVERLAP = timedelta(days=365)


def _overlap(text: str) -> timedelta:
    if text.strip() == "0":
        return timedelta(0)
    try:
        overlap = parse_duration(text)
    except (ValueError, OverflowError) as exc:
        raise CommandError(f"--overlap: {exc}") from None
    if overlap > MAX_OVERLAP:
        raise CommandError(f"--overlap: {text} is longer than {MAX_OVERLAP.days} days")
    return overlap


class Command(BaseCommand):
    help = (
        "Issue a new credential for a region's workers (printed once, on stdout; the site keeps only its public "
        "key), list a region's keys, or retire one."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", nargs="?", help="the region's slug (as in LATENCY_REGION / --region)")
        parser.add_argument(
            "--overlap",
            default="24h",
            help="how long the region's earlier keys keep working, e.g. 24h, 90m, 7d; 0 ends them at once "
            "(default 24h)",
        )
        parser.add_argument("--note", default="", help="a note kept with the key, e.g. which hosts get it")
        parser.add_argument(
            "--output",
            metavar="FILE",
            help="write the credential to FILE (mode 0600) instead of stdout, for a worker's LATENCY_REGION_KEY_FILE",
        )
        parser.add_argument(
            "--keep",
            action="store_true",
            help="with --output: leave FILE as it is, and issue nothing, when it holds a credential the site still "
            "accepts for the region",
        )
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument(
            "--list", action="store_true", help="list the region's keys (every region's without SLUG); no secrets"
        )
        mode.add_argument("--retire", metavar="KEY_ID", help="stop accepting this key of the region now")

    def handle(self, *args, **opts) -> None:
        from probes.models import Region

        slug = opts["slug"]
        if opts["list"]:
            self._list(slug)
            return
        if not slug:
            raise CommandError("name the region: manage.py region_key SLUG (manage.py region_key --list shows them)")
        region = Region.objects.filter(slug=slug).first()
        if region is None:
            raise CommandError(
                f"unknown region {slug!r}: `manage.py region_key --list` shows every region's slug "
                "(or the admin's Regions page)"
            )
        if opts["retire"]:
            self._retire(region, opts["retire"])
            return
        output = Path(opts["output"]) if opts["output"] else None
        if opts["keep"] and output is None:
            raise CommandError("--keep needs --output FILE: the file whose credential is kept")
        if output is not None and not output.parent.is_dir():
            raise CommandError(f"--output {output}: the folder {output.parent} does not exist")
        overlap = _overlap(opts["overlap"]) if opts["overlap"] is not None else DEFAULT_OVERLAP
        if output is not None and opts["keep"]:
            reason = self._refusal_of_file(output, region)
            if reason is None:
                self.stderr.write(f"region {region.slug} ({region.name}): {output} holds a key in force; kept")
                return
            self.stderr.write(f"region {region.slug}: a new key for {output}: {reason}")
        issued = issue_key(region, overlap=overlap, note=opts["note"])
        if output is not None:
            _write_secret(output, issued.credential)
        else:
            # stdout: the credential alone, for $(...). Never logged, never stored.
            self.stdout.write(issued.credential)
        self.stderr.write(
            f"region {region.slug} ({region.name}): new key {issued.key_id}; {self._earlier(region, issued.key_id)}"
        )

    @staticmethod
    def _refusal_of_file(path: Path, region) -> str | None:
        """Why the credential in `path` would not serve `region` now (never quoting it), or None."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return "the file does not exist yet"
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"--output {path}: cannot be read ({type(exc).__name__})") from None
        return refusal_of(text, region)

    def _earlier(self, region, new_key_id: str) -> str:
        from probes.models import RegionKey

        now = datetime.now(UTC)
        keys = list(RegionKey.objects.filter(region=region).exclude(key_id=new_key_id))
        ends = sorted({key.retires_at for key in keys if key.retires_at is not None and key.retires_at > now})
        if not keys:
            return "the region had no earlier key"
        if not ends:
            return "its earlier keys are no longer accepted"
        return "its earlier keys are accepted until " + ", ".join(f"{when:{_WHEN}}" for when in ends)

    def _retire(self, region, key_id: str) -> None:
        from probes.models import RegionKey

        now = datetime.now(UTC)
        key = RegionKey.objects.filter(region=region, key_id=key_id.strip()).first()
        if key is None:
            raise CommandError(
                f"region {region.slug} has no key {key_id!r}: "
                f"`manage.py region_key {region.slug} --list` shows its keys"
            )
        if key.retires_at is not None and key.retires_at <= now:
            self.stderr.write(
                f"key {key.key_id} of region {region.slug} was already retired at {key.retires_at:{_WHEN}}"
            )
            return
        # Conditional: a concurrent retirement with an earlier end keeps it.
        RegionKey.objects.filter(pk=key.pk).exclude(retires_at__lte=now).update(retires_at=now)
        self.stderr.write(f"key {key.key_id} of region {region.slug} is no longer accepted (retired at {now:{_WHEN}})")

    def _list(self, slug: str | None) -> None:
        from probes.models import Region, RegionKey

        regions = Region.objects.order_by("slug")
        if slug:
            regions = regions.filter(slug=slug)
            if not regions.exists():
                raise CommandError(f"unknown region {slug!r}: `manage.py region_key --list` shows every region's slug")
        now = datetime.now(UTC)
        keys: dict[int, list] = {}
        for key in RegionKey.objects.filter(region__in=regions).order_by("-created_at"):
            keys.setdefault(key.region_id, []).append(key)
        self.stdout.write(f"{'region':<24} {'key id':<16}  {'created':<23}  {'retires':<23}  in force")
        for region in regions:
            if not keys.get(region.id):
                self.stdout.write(f"{region.slug:<24} {'(no key)':<16}")
            for key in keys.get(region.id, []):
                retires = f"{key.retires_at:{_WHEN}}" if key.retires_at else "-"
                in_force = "yes" if key.retires_at is None or key.retires_at > now else "no"
                note = f"  {key.note}" if key.note else ""
                self.stdout.write(
                    f"{region.slug:<24} {key.key_id:<16}  {key.created_at:{_WHEN}}  {retires:<23}  {in_force}{note}"
                )


def _write_secret(path: Path, text: str) -> None:
    """`text` into `path`, readable by its owner only; a reader sees the old file or the new one, never a part."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # created 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
