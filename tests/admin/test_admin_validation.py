"""The admin refuses bad configuration with a message that says what to fix,
and keeps measurements read-only."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.admin.sites import site
from django.contrib.auth.models import Permission, User
from django.core.exceptions import ValidationError
from django.test import RequestFactory
from django.urls import reverse

from probes.forms import NO_REGION
from probes.models import Measurement, Probe, Region, Target
from tests.factories import HourlyRollupFactory


def target_data(**overrides) -> dict:
    data = {
        "name": "OpenAI mini",
        "api_style": "openai",
        "url": "https://api.openai.com/v1/chat/completions",
        "model": "gpt-4o-mini",
        "api_key_env": "OPENAI_API_KEY",
        "headers": "{}",
        "ca_bundle": "",
        "http_version": "1.1",
        "location_name": "AWS us-east-1, Ashburn",
        "latitude": "39.04",
        "longitude": "-77.49",
    }
    data.update(overrides)
    return data


def probe_data(target: Target, regions: list[Region], **overrides) -> dict:
    data = {
        "target": str(target.pk),
        "name": "hello",
        "enabled": "on",
        "prompt": "Say hello in five words.",
        "workload": "short",
        "max_tokens": "64",
        "connection": "cold",
        "interval_seconds": "60",
        "timeout_seconds": "30",
        "regions": [str(r.pk) for r in regions],
    }
    data.update(overrides)
    return data


def form_errors(response) -> dict:
    assert response.status_code == 200, "expected the form to be shown again with errors"
    form = response.context["adminform"].form
    return {name: [str(e) for e in errs] for name, errs in form.errors.items()}


def seeded(*slugs: str) -> list[Region]:
    return list(Region.objects.filter(slug__in=slugs))


# Target ------------------------------------------------------------------


def test_target_non_http_url_is_refused(admin_client):
    response = admin_client.post(reverse("admin:probes_target_add"), target_data(url="ftp://api.example.com/v1"))
    assert form_errors(response)["url"] == ["URL must start with http:// or https://"]
    assert b"URL must start with http:// or https://" in response.content
    assert not Target.objects.exists()


def test_target_literal_authorization_header_is_refused(admin_client):
    headers = json.dumps({"Authorization": "Bearer sk-live-0123456789"})
    response = admin_client.post(reverse("admin:probes_target_add"), target_data(headers=headers))
    [message] = form_errors(response)["headers"]
    assert "Authorization" in message and "api_key_env" in message and "${VAR}" in message
    # The refused secret must not be echoed into an error message either.
    assert "sk-live-0123456789" not in message
    assert not Target.objects.exists()


@pytest.mark.parametrize("name", ["x-api-key", "X-Goog-Api-Key", "api-key", "AUTHORIZATION"])
def test_every_secret_header_name_needs_a_reference(admin_client, name):
    response = admin_client.post(reverse("admin:probes_target_add"), target_data(headers=json.dumps({name: "abc"})))
    assert "api_key_env" in form_errors(response)["headers"][0]


def test_target_with_env_reference_header_saves_and_stores_no_key(admin_client):
    headers = {"Authorization": "Bearer ${GATEWAY_TOKEN}", "anthropic-version": "2023-06-01"}
    response = admin_client.post(reverse("admin:probes_target_add"), target_data(headers=json.dumps(headers)))
    assert response.status_code == 302, form_errors(response)
    target = Target.objects.get()
    assert target.headers == headers
    assert target.api_key_env == "OPENAI_API_KEY"


def test_target_model_is_required_for_openai(admin_client):
    response = admin_client.post(reverse("admin:probes_target_add"), target_data(model=""))
    assert "model is required" in form_errors(response)["model"][0]


def test_target_api_key_env_must_be_a_variable_name(admin_client):
    response = admin_client.post(reverse("admin:probes_target_add"), target_data(api_key_env="sk-live-abc"))
    assert "environment variable" in form_errors(response)["api_key_env"][0]


def test_target_emptied_headers_box_saves_as_empty_object(admin_client):
    response = admin_client.post(reverse("admin:probes_target_add"), target_data(headers=""))
    assert response.status_code == 302, form_errors(response)
    assert Target.objects.get().headers == {}


def test_target_changelist_shows_key_variable_name(admin_client, make_target):
    make_target(name="Claude", api_style="anthropic", api_key_env="ANTHROPIC_API_KEY")
    response = admin_client.get(reverse("admin:probes_target_changelist"))
    assert response.status_code == 200
    assert b"ANTHROPIC_API_KEY" in response.content


# Region ------------------------------------------------------------------


def test_region_country_must_be_alpha2_upper_case(admin_client):
    data = {
        "slug": "eu-paris",
        "name": "Paris",
        "city": "Paris",
        "country": "fr",
        "latitude": "48.86",
        "longitude": "2.35",
        "active": "on",
    }
    response = admin_client.post(reverse("admin:probes_region_add"), data)
    assert "ISO 3166-1 alpha-2" in form_errors(response)["country"][0]
    data["country"], data["latitude"] = "FR", "91"
    response = admin_client.post(reverse("admin:probes_region_add"), data)
    assert form_errors(response)["latitude"] == ["Latitude must be between -90 and 90."]


def test_region_changelist_lists_seeded_regions_with_editable_active(admin_client):
    response = admin_client.get(reverse("admin:probes_region_changelist"))
    assert response.status_code == 200
    assert b"af-lagos" in response.content
    assert b'name="form-0-active"' in response.content


# Probe -------------------------------------------------------------------


def test_probe_interval_below_minimum_is_refused(admin_client, make_target):
    target = make_target()
    data = probe_data(target, seeded("af-lagos"), interval_seconds="5", timeout_seconds="3")
    response = admin_client.post(reverse("admin:probes_probe_add"), data)
    assert form_errors(response)["interval_seconds"] == ["Interval must be at least 10 seconds."]
    assert not Probe.objects.exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("interval_seconds", "-5", "Interval must be at least 10 seconds."),
        ("interval_seconds", "0", "Interval must be at least 10 seconds."),
        ("interval_seconds", "1", "Interval must be at least 10 seconds."),
        ("max_tokens", "-1", "max_tokens must be at least 1."),
        ("max_tokens", "0", "max_tokens must be at least 1."),
    ],
)
def test_one_bound_one_message_in_the_admin_and_the_model(admin_client, make_target, field, value, message):
    target = make_target()
    data = probe_data(target, seeded("af-lagos"), **{field: value, "timeout_seconds": "0.5"})
    response = admin_client.post(reverse("admin:probes_probe_add"), data)
    assert form_errors(response)[field] == [message]
    probe = Probe(target=target, name="direct", **{field: int(value)}, timeout_seconds=0.5)
    with pytest.raises(ValidationError) as info:
        probe.full_clean()
    assert info.value.message_dict[field] == [message]


def test_the_form_inputs_carry_the_model_bounds(admin_client):
    html = admin_client.get(reverse("admin:probes_probe_add")).content.decode()
    assert re.search(r'<input type="number" name="interval_seconds"[^>]* min="10" max="86400"', html), html


def test_the_region_picker_is_boxes_to_tick_without_a_modifier_key_hint(admin_client):
    html = admin_client.get(reverse("admin:probes_probe_add")).content.decode()
    assert 'type="checkbox" name="regions"' in html
    assert "Hold down" not in html
    assert "Regions to run from (at least one)." in html


def test_probe_interval_above_maximum_is_refused(admin_client, make_target):
    data = probe_data(make_target(), seeded("af-lagos"), interval_seconds="86401")
    response = admin_client.post(reverse("admin:probes_probe_add"), data)
    assert form_errors(response)["interval_seconds"] == ["Interval must be at most 86400 seconds (one day)."]


def test_probe_without_region_is_refused(admin_client, make_target):
    data = probe_data(make_target(), [])
    del data["regions"]
    response = admin_client.post(reverse("admin:probes_probe_add"), data)
    assert form_errors(response)["regions"] == [NO_REGION]
    assert NO_REGION.encode() in response.content
    assert not Probe.objects.exists()


def test_probe_timeout_not_shorter_than_interval_is_refused(admin_client, make_target):
    data = probe_data(make_target(), seeded("af-lagos"), interval_seconds="30", timeout_seconds="30")
    response = admin_client.post(reverse("admin:probes_probe_add"), data)
    [message] = form_errors(response)["timeout_seconds"]
    assert "must be shorter than the interval" in message


def test_probe_timeout_must_be_positive(admin_client, make_target):
    data = probe_data(make_target(), seeded("af-lagos"), timeout_seconds="0")
    response = admin_client.post(reverse("admin:probes_probe_add"), data)
    assert form_errors(response)["timeout_seconds"] == ["Must be greater than zero."]


def test_probe_name_is_unique_per_target(admin_client, make_probe):
    existing = make_probe(name="hello")
    data = probe_data(existing.target, seeded("af-lagos"), name="hello")
    response = admin_client.post(reverse("admin:probes_probe_add"), data)
    errors = form_errors(response)
    assert "This target already has a probe with this name." in str(errors)


def test_good_probe_saves_with_its_regions(admin_client, make_target):
    target = make_target()
    regions = seeded("af-lagos", "eu-london")
    response = admin_client.post(reverse("admin:probes_probe_add"), probe_data(target, regions, connection="warm"))
    assert response.status_code == 302, form_errors(response)
    probe = Probe.objects.get()
    assert probe.target == target and probe.connection == "warm" and probe.enabled
    assert {r.slug for r in probe.regions.all()} == {"af-lagos", "eu-london"}
    assert str(probe) == f"{target.name} / hello"


def test_run_now_action_queues_a_run_per_active_region_on_the_broker(
    admin_client, make_region, make_probe, settings, test_redis_url
):
    import base64

    import redis
    from kombu import Connection

    from latency.celery import app
    from probes.scheduling import RUN_TASK, region_queue

    # The action publishes through latency.celery.app, which reads
    # CELERY_BROKER_URL from the Django settings (namespace "CELERY"): point it
    # at the suite's Redis database and drop the app's cached pools (not
    # closed: kombu shares them per URL across the process) both ways.
    def drop_pools():
        app._pool = None
        app.amqp._producer_pool = None

    broker = redis.Redis.from_url(test_redis_url)
    broker.flushdb()
    drop_pools()
    settings.CELERY_BROKER_URL = test_redis_url
    try:
        assert app.pool.connection.as_uri() == Connection(test_redis_url).as_uri()
        lagos, london, closed = make_region(), make_region(), make_region(active=False)
        a = make_probe(regions=[lagos, london, closed])
        b = make_probe(regions=[london])
        c = make_probe(regions=[lagos])  # not selected
        response = admin_client.post(
            reverse("admin:probes_probe_changelist"),
            {"action": "run_now", "_selected_action": [a.pk, b.pk]},
            follow=True,
        )
        assert "Queued 3 runs" in [str(m) for m in response.context["messages"]]

        def queued(region):
            messages = []
            for raw in broker.lrange(region_queue(region.slug), 0, -1):
                envelope = json.loads(raw)
                assert envelope["headers"]["task"] == RUN_TASK
                (order,), _kwargs, _embed = json.loads(base64.b64decode(envelope["body"]))
                message = json.loads(order["body"])  # the content the central key signed
                assert (message["region"], message["region_id"]) == (region.slug, region.id)
                messages.append(message["probe_id"])
            return sorted(messages)

        assert queued(lagos) == [a.pk]
        assert queued(london) == sorted([a.pk, b.pk])
        assert queued(closed) == []
        assert c.pk not in queued(lagos)
    finally:
        drop_pools()
        broker.close()


# Measurement -------------------------------------------------------------


@pytest.fixture
def measurements(make_probe):
    lagos, london = seeded("af-lagos", "eu-london")
    probe = make_probe(regions=[lagos, london])
    start = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
    rows = []
    for i in range(6):
        region = lagos if i % 2 else london
        failed = i == 5
        rows.append(
            Measurement.objects.create(
                probe=probe,
                target=probe.target,
                region=region,
                scheduled_for=start + timedelta(minutes=i),
                started_at=start + timedelta(minutes=i, seconds=1),
                worker=f"worker-{region.slug}",
                outcome="connect_error" if failed else "ok",
                error="connection refused by peer" if failed else None,
                connection="cold",
                ttfb_ms=None if failed else 210.5 + i,
                ttft_ms=None if failed else 250.25 + i,
                total_ms=900.0 + i,
                http_status=None if failed else 200,
            )
        )
    return rows


def test_measurement_admin_has_no_add_or_change(admin_client, measurements):
    model_admin = site._registry[Measurement]
    request = RequestFactory().get("/")
    request.user = User.objects.get(username="admin")
    assert model_admin.has_add_permission(request) is False
    assert model_admin.has_change_permission(request, measurements[0]) is False
    assert model_admin.has_delete_permission(request, measurements[0]) is True  # superuser

    assert admin_client.get(reverse("admin:probes_measurement_add")).status_code == 403
    change_url = reverse("admin:probes_measurement_change", args=[measurements[0].pk])
    view = admin_client.get(change_url)
    assert view.status_code == 200  # shown read-only
    assert b'name="_save"' not in view.content
    before = Measurement.objects.get(pk=measurements[0].pk).outcome
    assert admin_client.post(change_url, {"outcome": "timeout"}).status_code == 403
    assert Measurement.objects.get(pk=measurements[0].pk).outcome == before


def test_measurement_delete_is_for_superusers_only(db, measurements):
    staff = User.objects.create_user("ops", password="x", is_staff=True)
    staff.user_permissions.add(*Permission.objects.filter(codename__in=["view_measurement", "delete_measurement"]))
    request = RequestFactory().get("/")
    request.user = User.objects.get(pk=staff.pk)
    model_admin = site._registry[Measurement]
    assert model_admin.has_view_permission(request, measurements[0])
    assert model_admin.has_delete_permission(request, measurements[0]) is False


def test_measurement_changelist_renders_and_filters(admin_client, measurements):
    url = reverse("admin:probes_measurement_changelist")
    response = admin_client.get(url)
    assert response.status_code == 200
    cl = response.context["cl"]
    assert cl.result_count == 6
    assert cl.show_full_result_count is False
    content = response.content.decode()
    for column in ("started (utc)", "region", "target", "outcome", "ttft (ms)", "ttfb (ms)", "total (ms)", "http"):
        assert column in content.lower()
    assert "250.2" in content  # a TTFT value is shown, to a tenth of a millisecond

    lagos = Region.objects.get(slug="af-lagos")
    assert admin_client.get(url, {"region__id__exact": lagos.pk}).context["cl"].result_count == 3
    assert admin_client.get(url, {"outcome__exact": "connect_error"}).context["cl"].result_count == 1
    assert admin_client.get(url, {"connection__exact": "warm"}).context["cl"].result_count == 0
    target = measurements[0].target
    assert admin_client.get(url, {"target__id__exact": target.pk}).context["cl"].result_count == 6
    by_day = admin_client.get(url, {"started_at__year": 2025, "started_at__month": 3, "started_at__day": 1})
    assert by_day.context["cl"].result_count == 6
    assert admin_client.get(url, {"q": "refused"}).context["cl"].result_count == 1


# Hourly rollups ----------------------------------------------------------


def test_rollup_admin_is_read_only_and_reads_histograms(admin_client, make_probe):
    from probes.histogram import histogram_of

    rollup = HourlyRollupFactory(
        probe=make_probe(),
        hour=datetime(2025, 3, 1, 12, tzinfo=UTC),
        samples=4,
        errors=1,
        outcomes={"ok": 3, "timeout": 1},
        ttft_hist=histogram_of([100.0, 200.0, 300.0]).to_sparse(),
        tokens_per_s_hist=histogram_of([40.0, 50.0, 60.0]).to_sparse(),
    )
    response = admin_client.get(reverse("admin:probes_hourlyrollup_changelist"))
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1
    content = response.content.decode()
    assert "TTFT p50 (ms)" in content and "201.6" in content  # the bucket holding 200 ms
    assert "Tokens/s p50" in content and "50.4" in content  # the bucket holding 50 tok/s
    assert admin_client.get(reverse("admin:probes_hourlyrollup_add")).status_code == 403
    change_url = reverse("admin:probes_hourlyrollup_change", args=[rollup.pk])
    assert admin_client.post(change_url, {"samples": "9"}).status_code == 403
    assert admin_client.get(reverse("admin:probes_hourlyrollup_delete", args=[rollup.pk])).status_code == 403


def test_add_pages_render(admin_client):
    for name in ("region", "target", "probe"):
        assert admin_client.get(reverse(f"admin:probes_{name}_add")).status_code == 200, name


# Kept out of the admin on purpose: a bookkeeping mark of the rollups, nothing a person reads or edits.
# The evaluator's bookkeeping (AlertState: the hysteresis; ObjectiveAlertState: an objective's burn-rate alert) and
# an incident's timeline, which the incident's own admin page shows inline, have no list of their own.
INTERNAL_MODELS = {
    "RollupHour",
    "AlertState",
    "ObjectiveAlertState",
    "IncidentEvent",
    # An incident's public updates: posted from the incident page, shown inline on the incident's admin page.
    "IncidentUpdate",
    # Real users' rows and the receivers' bookkeeping: written by the receivers only, read on the pages.
    "Observation",
    "ObservationRollup",
    "IngestRate",
    "MetricStream",
    "SpanResource",
    # Counters ingest keeps for /metrics: written in ingest's INSERT only, read by the scrape.
    "MeasurementTally",
    # Ingest's per-hour counter that rollup rebuilds compare against (probes.rollups.locks).
    "HourVersion",
    # Which raw rows an hour's rollups count (the rebuild's cut), written by the rebuild, read by the dashboard.
    "HourCut",
    # Region rollups: derived from the hourly rollups in their rebuild (probes.rollups.ladder), read by the dashboard.
    "RegionRollup",
    # Series rollups and their marks: derived from the hourly rollups in their rebuild
    # (probes.rollups.hour_blocks, series_blocks), read by the dashboard.
    "SeriesRollup",
    "SeriesBlockMark",
    # An objective's day counts: the sums of its hour counts (shown under Records), written beside them.
    "SLODayCount",
    # The same counts per five minutes for the last hours only (the short burn windows), and how far the counter
    # has got: bookkeeping the counter writes and readers take, nothing a person reads or edits.
    "SLOFiveMinuteCount",
    "SLOCounted",
}


def test_every_probes_model_but_the_internal_ones_is_in_the_admin():
    from django.apps import apps

    models = set(apps.get_app_config("probes").get_models())
    assert {m for m in models if m.__name__ not in INTERNAL_MODELS} <= set(site._registry)
    assert not {m for m in models if m.__name__ in INTERNAL_MODELS} & set(site._registry)


def test_the_rollup_hour_marks_are_not_in_the_admin(admin_client):
    assert b"Rollup hours" not in admin_client.get(reverse("admin:index")).content
    assert admin_client.get("/admin/probes/rolluphour/").status_code == 404
