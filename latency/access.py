"""Who may read what: the one place the dashboard's reading rules live.

Provider error texts can carry request ids, account names, quota details or
a fragment of the prompt, so they follow the same rule as the raw rows in
the CSV export: only users allowed to view measurements see them. Everyone
else who may read the dashboard (anyone, in public mode) sees the outcome
only.
"""

from __future__ import annotations

from django.conf import settings

MEASUREMENT_PERMISSION = "probes.view_measurement"
# Free text written by a provider or the network stack: hidden together.
ERROR_FIELDS = ("error", "error_type")


def can_read_dashboard(user) -> bool:
    # Read per request, not at import: the setting is a deployment switch and
    # tests flip it with override_settings.
    return settings.LATENCY_PUBLIC_DASHBOARD or user.is_authenticated


def may_see_errors(user) -> bool:
    return user.is_authenticated and user.has_perm(MEASUREMENT_PERMISSION)


def visible_rows(rows: list[dict], user) -> list[dict]:
    """Measurement rows as this user may see them: without error texts unless may_see_errors."""
    if may_see_errors(user):
        return rows
    return [{**row, **dict.fromkeys(ERROR_FIELDS)} for row in rows]
