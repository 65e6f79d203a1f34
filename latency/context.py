"""Template context shared by every page, the admin's included."""

from __future__ import annotations

from django.conf import settings


def dashboard(request) -> dict:
    # Read per request rather than at import, so override_settings in tests
    # and a reloaded configuration both show on the next page.
    return {
        "emulated_geography": settings.LATENCY_EMULATED_GEOGRAPHY,
        "public_dashboard": settings.LATENCY_PUBLIC_DASHBOARD,
    }
