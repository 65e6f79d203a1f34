"""`manage.py atlas export [--output FILE]` and `manage.py atlas apply FILE [--dry-run] [--prune]`:
configuration as code (probes.config_as_code). A thin shell: it reads and writes files, prints the plan and
the outcome, and exits non-zero when a file is refused."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from probes.config_as_code import apply_document, export_yaml, parse
from probes.config_as_code.apply import CREATE, DELETE, UPDATE


def _write(path: Path, text: str) -> None:
    # Whole or not at all: a file cut short by a full disk would apply as a smaller configuration.
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class Command(BaseCommand):
    help = (
        "Configuration as code: export regions, targets, probes, alert rules, notification channels, model groups, "
        "objectives and status pages as YAML (without secrets), or apply such a file, printing the plan first."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="{export,apply}")
        export = actions.add_parser("export", help="write the configuration as YAML")
        export.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
        apply = actions.add_parser("apply", help="make the database match a YAML file")
        apply.add_argument("file", metavar="FILE", help="the YAML file ('-' for standard input)")
        apply.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
        apply.add_argument(
            "--prune",
            action="store_true",
            help="also delete what the file does not name, in each section the file has",
        )

    def handle(self, *args, **opts) -> None:
        if opts["action"] == "export":
            self._export(opts["output"])
        else:
            self._apply(opts["file"], dry_run=opts["dry_run"], prune=opts["prune"])

    def _export(self, output: str | None) -> None:
        text = export_yaml()
        if output is None:
            self.stdout.write(text, ending="")
            return
        try:
            _write(Path(output), text)
        except OSError as exc:
            raise CommandError(f"--output: {exc.strerror or exc}: {output}") from None
        self.stderr.write(f"Wrote {output}")

    def _apply(self, name: str, *, dry_run: bool, prune: bool) -> None:
        try:
            text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{name}: {getattr(exc, 'strerror', None) or exc}") from None
        document, problems = parse(text, source=name)
        if problems:
            raise CommandError(self._refusal(problems))
        outcome = apply_document(document, prune=prune, dry_run=dry_run)
        for step in outcome.steps:
            self.stdout.write(str(step))
        for note in outcome.notes:
            self.stdout.write(f"note: {note}")
        if outcome.problems:
            raise CommandError(self._refusal(outcome.problems))
        created, updated, deleted = (outcome.count(action) for action in (CREATE, UPDATE, DELETE))
        if not outcome.steps:
            self.stdout.write(f"Nothing to change: the database matches {name}.")
        elif dry_run:
            self.stdout.write(
                f"Dry run: {created} to create, {updated} to update, {deleted} to delete; nothing was changed."
            )
        else:
            self.stdout.write(f"Applied: {created} created, {updated} updated, {deleted} deleted.")

    @staticmethod
    def _refusal(problems) -> str:
        lines = [str(problem) for problem in problems]
        return "refused, nothing was changed:\n  " + "\n  ".join(lines)
