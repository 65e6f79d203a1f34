from __future__ import annotations

from django.core.checks import run_checks


def latency_ids() -> list[str]:
    """The ids of the latency.* messages `manage.py check` reports with the current settings."""
    return sorted(m.id for m in run_checks(include_deployment_checks=True) if m.id and m.id.startswith("latency."))
