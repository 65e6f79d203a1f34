"""`manage.py create_ingest_source NAME [--allowed-origin ORIGIN ...]`: a new ingest source, for scripts.

Prints exactly two lines on stdout,
    token: <secret>
    browser-key: <public key>
so that `awk '/^token:/ {print $2}'` captures the token. The site keeps only the token's hash: this is the one
time it is shown (the admin's "Rotate token" makes a new one). Origins are written as browsers send them
(probes.realusers.origins); a bad one, or a name already taken, stops the command with nothing made."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from probes.realusers.origins import clean_origins
from probes.realusers.sources import create_source


class Command(BaseCommand):
    help = (
        "Make an ingest source of real users' calls; prints its secret token (shown only this once) and its "
        "public browser key, one per line."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the source's name, e.g. the application's")
        parser.add_argument(
            "--allowed-origin",
            action="append",
            default=[],
            metavar="ORIGIN",
            help="a web origin (https://app.example.com) whose pages may send browser beacons; repeatable",
        )

    def handle(self, *args, **opts) -> None:
        from probes.models import IngestSource

        name = opts["name"].strip()
        if not name:
            raise CommandError("NAME must not be empty")
        try:
            origins = clean_origins(opts["allowed_origin"])
        except ValidationError as exc:
            raise CommandError(f"--allowed-origin: {' '.join(exc.messages)}") from None
        if IngestSource.objects.filter(name=name).exists():
            raise CommandError(f"an ingest source named {name!r} already exists")
        try:
            source, token = create_source(name, origins)
        except ValidationError as exc:
            raise CommandError(
                "; ".join(f"{field}: {' '.join(errs)}" for field, errs in exc.message_dict.items())
            ) from None
        self.stdout.write(f"token: {token}")
        self.stdout.write(f"browser-key: {source.browser_key}")
