"""latency.W009: a public dashboard with DEBUG shows tracebacks to anyone; latency.W010: a public dashboard
outside production runs without HTTPS-only cookies, HSTS or the redirect."""

from tests.settings_checks.support import latency_ids


def test_a_public_dashboard_with_debug_is_warning_w009(settings):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    settings.DEBUG = True
    assert "latency.W009" in latency_ids()


def test_a_public_dashboard_outside_production_is_warning_w010(settings):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    settings.DEBUG = False
    settings.LATENCY_PRODUCTION = False
    assert "latency.W010" in latency_ids()
    settings.LATENCY_PRODUCTION = True
    settings.ALLOWED_HOSTS = ["atlas.example.org"]
    assert not {"latency.W009", "latency.W010"} & set(latency_ids())
