"""`manage.py slo_check [--slo NAME ...] [--window 1h] [--json] [--now ISO-TIME]`: a gate for pipelines (a deploy,
a provider switch): one line per objective, exit status 1 when any objective checked burns its error budget faster
than 1x over the window, else 0.

Every figure is the read facade's (probes.readings.slos.objective_rows), as the pages and /metrics show them. Only
a burn rate strictly above 1 fails (beyond floating point's last digits): an objective burning exactly as fast as
its window allows is on course. Not
judged, and so never failing, but listed with the reason: a disabled objective, one waiting for its rebuild (its
counts are not exact yet: `slo_rebuild` or the queued rebuild makes them so) and one without eligible calls over
the window (no burn rate to compare). A bad option, a window that is not a burn window or an unknown objective
name exits with status 2.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandError

from probes.readings.slos import BURN_WINDOWS, ObjectiveRow, objective_rows
from probes.timeparse import parse_when

# Faster than this over the window fails the gate: 1 spends the budget in exactly the objective's window.
LIMIT = 1.0
# A burn of exactly 1 comes out of floating point a hair above it (0.1 / (1 - 0.9) = 1.0000000000000002): such a
# hair is not faster.
TOLERANCE = 1e-9
NOT_JUDGED = {"disabled": "disabled", "rebuilding": "rebuilding: counts not exact yet"}


def verdict(row: ObjectiveRow, window: str) -> tuple[bool, str]:
    """(fails, what the line says about it) for one objective over the window."""
    if row.status in NOT_JUDGED:
        return False, f"not judged ({NOT_JUDGED[row.status]})"
    burn = row.burn.get(window)
    if burn is None:
        return False, f"not judged (no eligible calls in {window})"
    if burn > LIMIT and not math.isclose(burn, LIMIT, rel_tol=TOLERANCE):
        return True, f"FAIL (burns faster than {LIMIT:g}x)"
    return False, "pass"


def _percent(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value * 100:.{digits}f}%"


class Command(BaseCommand):
    help = (
        "Check service level objectives' burn rate over a window: one line each; exit status 1 when any burns "
        "its error budget faster than 1x, else 0."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--slo",
            action="extend",
            nargs="+",
            default=[],
            metavar="NAME",
            help="an objective's name (repeatable); default every objective",
        )
        parser.add_argument(
            "--window",
            choices=[label for label, _ in BURN_WINDOWS],
            default="1h",
            help="the burn-rate window to judge (default 1h)",
        )
        parser.add_argument("--json", action="store_true", help="print one JSON array, one object per objective")
        parser.add_argument("--now", default="", help="ISO 8601 time (UTC unless it says otherwise); default now")

    def handle(self, *args, **opts):
        from probes.models import ServiceLevelObjective

        clock = datetime.now(UTC)
        try:
            now = parse_when(opts["now"], clock) if opts["now"] else clock
        except ValueError as exc:
            raise CommandError(f"--now: {exc}", returncode=2) from None
        ids = None
        if opts["slo"]:
            found = dict(ServiceLevelObjective.objects.filter(name__in=opts["slo"]).values_list("name", "id"))
            unknown = [name for name in dict.fromkeys(opts["slo"]) if name not in found]
            if unknown:
                raise CommandError(f"no objective named {', '.join(map(repr, unknown))}", returncode=2)
            ids = list(found.values())
        window = opts["window"]
        rows = objective_rows(now, ids)
        checked = [(row, *verdict(row, window)) for row in rows]
        if opts["json"]:
            self.stdout.write(json.dumps([self._object(row, window, fails, said) for row, fails, said in checked]))
        else:
            for row, _, said in checked:
                self.stdout.write(self._line(row, window, said))
            if not rows:
                self.stdout.write("no objectives")
        if any(fails for _, fails, _ in checked):
            raise SystemExit(1)

    @staticmethod
    def _line(row: ObjectiveRow, window: str, said: str) -> str:
        burn = row.burn.get(window)
        return (
            f"{row.name}: burn {window} {'-' if burn is None else f'{burn:.2f}x'}, "
            f"attainment {_percent(row.budget.attainment, 3)} (objective {row.objective_percent:g}%, "
            f"{row.window_label}), budget remaining {_percent(row.budget.remaining_ratio, 1)}, "
            f"status {row.status}: {said}"
        )

    @staticmethod
    def _object(row: ObjectiveRow, window: str, fails: bool, said: str) -> dict:
        return {
            "name": row.name,
            "window": window,
            "burn_rate": row.burn.get(window),
            "attainment": row.budget.attainment,
            "budget_remaining_ratio": row.budget.remaining_ratio,
            "objective_percent": row.objective_percent,
            "objective_window": row.window,
            "status": row.status,
            "exact_since": row.exact_since.isoformat() if row.exact_since else None,
            "fails": fails,
            "verdict": said,
        }
