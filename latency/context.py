"""Template context shared by every page, the admin's included."""

from __future__ import annotations

from django.conf import settings

from latency.access import may_read_incidents
from probes import readings


def dashboard(request) -> dict:
    # Read per request rather than at import, so override_settings in tests
    # and a reloaded configuration both show on the next page.
    user = getattr(request, "user", None)
    return {
        "emulated_geography": settings.LATENCY_EMULATED_GEOGRAPHY,
        "public_dashboard": settings.LATENCY_PUBLIC_DASHBOARD,
        # The header's count of open incidents: signed-in users only (latency.access.may_read_incidents),
        # and a callable, so the query runs only on pages whose template shows it (not the admin's).
        "open_incident_count": readings.open_count if may_read_incidents(user) else 0,
    }
