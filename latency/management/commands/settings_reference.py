"""Renders the files generated from the one list of settings (probes/conf/catalog.py): the configuration reference
and the deploy examples. `--write` writes them (`make settings-docs`); `--check` says which differ."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from probes.conf.render import OUTPUTS


class Command(BaseCommand):
    help = "Print the configuration reference, or write (--write) or compare (--check) every generated file."

    def add_arguments(self, parser) -> None:
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--write", action="store_true", help="write every generated file in place")
        mode.add_argument("--check", action="store_true", help="fail when a committed file differs")

    def handle(self, *args, write: bool = False, check: bool = False, **options) -> None:
        root = Path(settings.BASE_DIR)
        if not (write or check):
            self.stdout.write(OUTPUTS["docs/reference/configuration.md"](), ending="")
            return
        stale = []
        for relative, render in OUTPUTS.items():
            path = root / relative
            text = render()
            current = path.read_text() if path.exists() else None
            if current == text:
                continue
            if check:
                stale.append(relative)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            self.stdout.write(f"wrote {relative}")
        if stale:
            raise CommandError(f"out of date (run `make settings-docs`): {', '.join(stale)}")
