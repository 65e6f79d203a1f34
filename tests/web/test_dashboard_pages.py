"""The dashboard's pages as a reader meets them: who may see them, what
they say when there is nothing to show, and what they list when there is."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from probes.models import Measurement

ROOT = Path(__file__).resolve().parents[2]  # the repository
DEMO_BANNER = "Demo data: latencies are emulated on one machine"


@pytest.fixture
def world(make_region, make_target, make_probe):
    """Two regions, a fast and a slow target probed from both, with the last
    hour of measurements; the slow one failed twice from Lagos."""
    lagos = make_region(slug="pg-lagos", name="Lagos", city="Lagos", country="NG", latitude=6.52, longitude=3.38)
    london = make_region(slug="pg-london", name="London", city="London", country="GB", latitude=51.5, longitude=-0.13)
    fast = make_target(name="Quick Model API", model="quick-1")
    slow = make_target(name="Sluggish Model API", model="slug-2")
    probes = {
        fast.id: make_probe(target=fast, regions=[lagos, london]),
        slow.id: make_probe(target=slow, regions=[lagos, london]),
    }
    now = timezone.now()
    rows = []
    for target, base in ((fast, 180.0), (slow, 1400.0)):
        for region in (lagos, london):
            for i in range(10):
                started = now - timedelta(minutes=5 * i + 1)
                failed = target is slow and region is lagos and i in (2, 6)
                rows.append(
                    Measurement(
                        probe=probes[target.id],
                        target=target,
                        region=region,
                        scheduled_for=started,
                        started_at=started,
                        worker="test-worker",
                        outcome="http_error" if failed else "ok",
                        error="HTTP 503: upstream overloaded, try later" if failed else None,
                        error_type="HTTPStatusError" if failed else None,
                        http_status=503 if failed else 200,
                        connection="cold",
                        connect_ms=None if failed else 30.0 + i,
                        ttfb_ms=None if failed else base * 0.7 + i,
                        ttft_ms=None if failed else base + 10 * i,
                        total_ms=5.0 if failed else base + 900.0,
                        tokens_per_s=None if failed else 40.0,
                    )
                )
    Measurement.objects.bulk_create(rows)
    return {"lagos": lagos, "london": london, "fast": fast, "slow": slow}


def page(client, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return response.content.decode()


# --- who may see the dashboard ------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/", "/regions/pg-lagos/", "/targets/1/"])
def test_every_page_asks_an_anonymous_visitor_to_sign_in_first(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.django_db
def test_signing_in_through_the_login_form_leads_to_the_overview(client, django_user_model, world):
    django_user_model.objects.create_user(username="ada", password="a-long-test-password-9931")
    form = page(client, "/accounts/login/")
    assert 'name="username"' in form and 'name="password"' in form
    response = client.post("/accounts/login/", {"username": "ada", "password": "a-long-test-password-9931"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert 'id="filters"' in page(client, "/")


@pytest.mark.django_db
def test_in_public_mode_every_page_is_readable_without_signing_in(client, settings, world):
    settings.LATENCY_PUBLIC_DASHBOARD = True
    overview = page(client, "/")
    assert 'id="map"' in overview and 'id="region-target-table"' in overview
    assert "Sign out" not in overview
    assert "Quick Model API" in page(client, "/regions/pg-lagos/")
    assert "Lagos" in page(client, f"/targets/{world['slow'].id}/")
    # Read-only: the admin keeps its own login.
    assert client.get("/admin/probes/probe/").status_code == 302


# --- the overview -------------------------------------------------------------


@pytest.mark.django_db
def test_with_no_probes_the_overview_says_to_add_a_target_and_a_probe_in_the_admin(client, viewer, make_target):
    make_target(name="Configured but never probed")
    html = page(client, "/")
    assert "Add a target and a probe in the admin" in html
    assert 'href="/admin/probes/probe/add/"' in html
    assert 'id="map"' not in html


@pytest.mark.django_db
def test_with_probes_but_no_data_in_the_window_the_overview_says_how_to_get_some(
    client, viewer, make_probe, make_target
):
    make_probe(target=make_target(name="Silent API"))
    html = page(client, "/")
    assert "No measurements in the last 1 h for any target" in html
    assert "widen the window or check that region workers are running" in html

    target_id = make_probe(target=make_target(name="Other API")).target_id
    html = page(client, f"/?target={target_id}&window=24h")
    assert "No measurements in the last 24 h for Other API" in html


@pytest.mark.django_db
def test_with_data_in_the_window_the_overview_has_no_empty_state_and_all_chart_slots(client, viewer, world):
    html = page(client, "/")
    assert "No measurements in the last" not in html
    assert re.search(r'<p id="empty-window"[^>]*hidden', html)
    for slot in ("map", "histograms", "timeseries", "phases", "region-target-table", "live-count", "live-indicator"):
        assert f'id="{slot}"' in html, slot
    for heading in ("region", "target", "model", "samples", "error_rate", "value"):
        assert f'data-key="{heading}"' in html, heading


@pytest.mark.django_db
def test_the_selection_is_kept_in_the_url_so_a_view_can_be_shared(client, viewer, world):
    slow = world["slow"]
    html = page(client, f"/?target={slow.id}&window=24h&percentile=p95&metric=ttfb")
    assert 'method="get"' in html
    assert re.search(rf'<input type="checkbox" name="target" value="{slow.id}"[^>]* checked> Sluggish Model API', html)
    assert '<option value="24h" selected>' in html
    assert '<option value="p95" selected>' in html
    assert '<option value="ttfb" selected>' in html


@pytest.mark.django_db
def test_a_bad_parameter_on_the_overview_is_explained_next_to_the_form(client, viewer, world):
    html = page(client, "/?percentile=p42", status=400)
    assert "percentile must be one of" in html
    assert "<code>percentile</code>" in html
    assert 'id="filters"' in html


# --- the region and target pages ----------------------------------------------


@pytest.mark.django_db
def test_the_region_page_ranks_every_target_fastest_first(client, viewer, world):
    html = page(client, "/regions/pg-lagos/")
    assert html.index("Quick Model API") < html.index("Sluggish Model API")
    table = html[html.index('id="region-ranking"') :]
    assert "quick-1" in table and "slug-2" in table
    # The slow target failed 2 of its 10 runs from Lagos.
    assert "20.0 %" in table
    assert f'href="/targets/{world["fast"].id}/"' in table


@pytest.mark.django_db
def test_a_region_without_measurements_says_so(client, viewer, make_region, make_probe):
    quiet = make_region(slug="pg-quiet", name="Quietville")
    make_probe(regions=[quiet])
    html = page(client, "/regions/pg-quiet/?window=15m")
    assert "No measurements in the last 15 min from Quietville" in html


@pytest.mark.django_db
def test_an_unknown_region_or_target_is_not_found(client, viewer, world):
    assert client.get("/regions/atlantis/").status_code == 404
    assert client.get("/targets/999999/").status_code == 404


@pytest.mark.django_db
def test_the_target_page_lists_recent_failures_with_their_outcome_and_error(client, viewer, world):
    # Error texts are for users allowed to view measurements (tests/test_error_text_visibility.py).
    from django.contrib.auth.models import Permission

    viewer.user_permissions.add(Permission.objects.get(codename="view_measurement", content_type__app_label="probes"))
    html = page(client, f"/targets/{world['slow'].id}/")
    failures = html[html.index('id="recent-failures"') : html.index('id="recent-measurements"')]
    assert failures.count("<tr>") == 1 + 2  # heading and two failures
    assert failures.count("http_error") == 2
    assert failures.count("HTTP 503: upstream overloaded, try later") == 2
    assert "HTTPStatusError" in failures
    assert "Lagos" in failures and "London" not in failures
    # Each time is the UTC instant in a <time> element, which static/js/time.js shows in the reader's zone.
    assert failures.count(" data-utc>") == 2 and 'Z" data-utc>' in failures
    measurements = html[html.index('id="recent-measurements"') :]
    assert measurements.count('class="outcome ok"') == 18


@pytest.mark.django_db
def test_a_target_without_failures_says_so(client, viewer, world):
    html = page(client, f"/targets/{world['fast'].id}/")
    assert "No failures among the recent measurements" in html


# --- every page -----------------------------------------------------------------


@pytest.mark.django_db
def test_with_emulated_geography_every_page_says_the_data_is_a_demo(client, settings, django_user_model, world):
    settings.LATENCY_EMULATED_GEOGRAPHY = True
    assert DEMO_BANNER in page(client, "/accounts/login/")
    admin = django_user_model.objects.create_superuser(username="root", password="a-long-test-password-9931")
    client.force_login(admin)
    for url in ("/", "/regions/pg-lagos/", f"/targets/{world['fast'].id}/", "/admin/"):
        assert DEMO_BANNER in page(client, url), url


@pytest.mark.django_db
def test_without_emulated_geography_no_page_claims_to_be_a_demo(client, viewer, world):
    for url in ("/", "/regions/pg-lagos/", f"/targets/{world['fast'].id}/"):
        assert DEMO_BANNER not in page(client, url), url


ATTRIBUTE_URLS = re.compile(r"""(?:src|href|action)\s*=\s*["']([^"']*)["']""", re.IGNORECASE)


@pytest.mark.django_db
def test_no_page_loads_or_links_anything_from_another_host(client, viewer, world):
    urls = ["/", "/?window=7d&metric=tokens_per_s", "/regions/pg-lagos/", f"/targets/{world['slow'].id}/"]
    for url in urls:
        html = page(client, url)
        assert "http://" not in html and "https://" not in html, url
        for link in ATTRIBUTE_URLS.findall(html):
            # Same host only: relative paths, no scheme, no protocol-relative //host.
            assert link.startswith(("/", "?", "#", "data:")) and not link.startswith("//"), (url, link)
            # Attribute values only: a random CSRF token may spell "cdn" too.
            assert "cdn" not in link.lower(), (url, link)
    html = page(client, "/")
    assert 'src="/static/vendor/plotly/plotly.min.js"' in html
    assert '"topojson_url": "/static/vendor/topojson/"' in html


def test_the_dashboard_script_and_stylesheet_reach_no_other_host():
    for path in ("static/js/dashboard.js", "static/js/charts.js", "static/js/incident.js", "static/css/atlas.css"):
        text = (ROOT / path).read_text()
        assert not re.search(r"https?://|//cdn|@import", text), path
    # The plot config is built by the charts' shared helpers (charts.js), loaded before dashboard.js.
    script = (ROOT / "static/js/dashboard.js").read_text() + (ROOT / "static/js/charts.js").read_text()
    # Every plot is drawn with our topojson and without the Plotly logo link.
    assert "topojsonURL: cfg.topojson_url" in script and "displaylogo: false" in script
