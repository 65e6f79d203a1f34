"""The models keep the engine's contract: same field names, one row per
slot, the shipped regions, and probes that turn into valid engine specs."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime

import pytest
from django.apps import apps as django_apps
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, models, transaction

from probes.engine.result import MEASUREMENT_FIELDS, ProbeSpec
from probes.engine.result import Measurement as EngineMeasurement
from probes.models import ENGINE_FIELDS, Measurement, Probe, Region, Target

# Written out here rather than imported from the migration, so a typo there
# cannot agree with itself. (latitude, longitude) of each city.
EXPECTED_REGIONS = {
    "af-lagos": ("NG", 6.52, 3.38),
    "af-nairobi": ("KE", -1.29, 36.82),
    "af-johannesburg": ("ZA", -26.20, 28.05),
    "af-cairo": ("EG", 30.04, 31.24),
    "eu-london": ("GB", 51.51, -0.13),
    "eu-frankfurt": ("DE", 50.11, 8.68),
    "us-ashburn": ("US", 39.04, -77.49),
    "us-sanfrancisco": ("US", 37.77, -122.42),
    "sa-saopaulo": ("BR", -23.55, -46.63),
    "ap-mumbai": ("IN", 19.08, 72.88),
    "ap-singapore": ("SG", 1.35, 103.82),
    "ap-tokyo": ("JP", 35.68, 139.65),
    "ap-sydney": ("AU", -33.87, 151.21),
    "me-dubai": ("AE", 25.20, 55.27),
    "ap-shanghai": ("CN", 31.23, 121.47),
}


def slot(probe: Probe, region: Region, when: datetime, **fields) -> Measurement:
    return Measurement(
        probe=probe,
        target=probe.target,
        region=region,
        scheduled_for=when,
        started_at=when,
        worker="worker-1",
        outcome="ok",
        connection="cold",
        **fields,
    )


# Measurement contract ----------------------------------------------------


def test_measurement_has_every_engine_field():
    columns = {f.name: f for f in Measurement._meta.concrete_fields}
    missing = [name for name in MEASUREMENT_FIELDS if name not in columns]
    assert not missing, f"Measurement lacks engine fields: {missing}"
    assert isinstance(columns["started_at"], models.DateTimeField)


def test_the_stored_table_has_a_nullable_column_for_every_optional_engine_field(db):
    # Read from the database itself, not from the model: a field added to the
    # model without its migration, or a migration that made a phase NOT NULL,
    # fails here (ENGINE_FIELDS is derived from MEASUREMENT_FIELDS, so
    # comparing the two could not fail).
    with connection.cursor() as cursor:
        described = connection.introspection.get_table_description(cursor, Measurement._meta.db_table)
    null_ok = {column.name: column.null_ok for column in described}
    required = {"outcome", "connection", "started_at"}
    for name in MEASUREMENT_FIELDS:
        column = Measurement._meta.get_field(name).column
        assert column in null_ok, f"{Measurement._meta.db_table} has no column {column}"
        assert null_ok[column] is (name not in required), name


def test_optional_engine_fields_are_nullable():
    # The engine says None when a phase did not happen; the column must say NULL, never 0.
    required = {"outcome", "connection"}
    for name in ENGINE_FIELDS:
        field = Measurement._meta.get_field(name)
        assert field.null is (name not in required), name


def test_an_engine_result_maps_straight_onto_a_row(make_probe):
    probe = make_probe()
    result = EngineMeasurement(
        outcome="ok",
        started_at="2025-03-01T12:00:00.123456+00:00",
        http_status=200,
        http_version="HTTP/2",
        remote_addr="203.0.113.7:443",
        dns_ms=1.5,
        connect_ms=10.25,
        tls_ms=20.0,
        ttfb_ms=180.0,
        first_event_ms=181.0,
        ttft_ms=250.123,
        ttfat_ms=260.0,
        total_ms=900.5,
        output_tokens=12,
        tokens_estimated=False,
        tokens_per_s=55.5,
        itl_p50_ms=15.0,
        itl_p95_ms=30.0,
        itl_max_ms=41.0,
        response_bytes=4096,
    ).to_dict()
    row = Measurement.objects.create(
        probe=probe,
        target=probe.target,
        region=probe.regions.get(),
        scheduled_for=datetime(2025, 3, 1, 12, 0, tzinfo=UTC),
        started_at=datetime.fromisoformat(result["started_at"]),
        worker="w1",
        **{name: result[name] for name in ENGINE_FIELDS},
    )
    row.refresh_from_db()
    for name in ENGINE_FIELDS:
        assert getattr(row, name) == result[name], name


def test_one_measurement_per_probe_region_and_slot(make_probe):
    lagos, london = Region.objects.get(slug="af-lagos"), Region.objects.get(slug="eu-london")
    probe = make_probe(regions=[lagos, london])
    when = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
    slot(probe, lagos, when).save()
    slot(probe, london, when).save()  # same slot, another region: a separate measurement
    with pytest.raises(IntegrityError, match="measurement_one_per_slot"), transaction.atomic():
        slot(probe, lagos, when, total_ms=1.0).save()
    assert Measurement.objects.filter(probe=probe).count() == 2


# Seeded regions ----------------------------------------------------------


def test_seeded_regions(db):
    regions = {r.slug: r for r in Region.objects.filter(slug__in=EXPECTED_REGIONS)}
    assert sorted(regions) == sorted(EXPECTED_REGIONS)
    for slug, (country, lat, lon) in EXPECTED_REGIONS.items():
        region = regions[slug]
        assert region.country == country, slug
        assert region.latitude == pytest.approx(lat, abs=0.05), slug
        assert region.longitude == pytest.approx(lon, abs=0.05), slug
        assert region.active and region.name and region.city
        region.full_clean()
    assert str(regions["af-lagos"]) == regions["af-lagos"].name


def test_seed_reverse_removes_only_seeded_slugs(db):
    Region.objects.create(slug="eu-paris", name="Paris", city="Paris", country="FR", latitude=48.86, longitude=2.35)
    seed = importlib.import_module("probes.migrations.0002_seed_regions")
    seed.unseed(django_apps, None)
    assert list(Region.objects.values_list("slug", flat=True)) == ["eu-paris"]
    seed.seed(django_apps, None)
    assert Region.objects.count() == len(EXPECTED_REGIONS) + 1


# Probe.spec --------------------------------------------------------------


def test_probe_spec_builds_a_valid_engine_spec(make_target, make_probe):
    target = make_target(
        api_style="anthropic",
        url="https://api.anthropic.com/v1/messages",
        model="claude-3-5-haiku-latest",
        api_key_env="ANTHROPIC_API_KEY",
        headers={"anthropic-version": "2023-06-01"},
        ca_bundle="corporate-ca.pem",
    )
    probe = make_probe(target=target, prompt="Count to three.", max_tokens=32, timeout_seconds=12.5, connection="warm")
    spec = Probe.objects.select_related("target").get(pk=probe.pk).spec()
    assert isinstance(spec, ProbeSpec)
    assert spec == ProbeSpec(
        url="https://api.anthropic.com/v1/messages",
        style="anthropic",
        model="claude-3-5-haiku-latest",
        prompt="Count to three.",
        max_tokens=32,
        headers={"anthropic-version": "2023-06-01"},
        api_key_env="ANTHROPIC_API_KEY",
        timeout_s=12.5,
        connection="warm",
        ca_bundle="corporate-ca.pem",
    )
    # It travels through the broker as a dict and must come back unchanged.
    assert ProbeSpec.from_dict(spec.to_dict()) == spec
    spec.headers["x-extra"] = "1"
    assert "x-extra" not in target.headers


# Model validation --------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://api.openai.com/v1/chat/completions",
        "http://mockllm:9100/v1/chat/completions",  # single-label host, as in a compose network
        "http://127.0.0.1:9100/v1/messages",
        "https://[::1]:8443/v1",
    ],
)
def test_target_accepts_http_urls(db, url):
    Target(name="t", api_style="openai", url=url, model="m").full_clean()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.com/file", "URL must start with http:// or https://"),
        ("HTTPS://example.com/v1", "URL must start with http:// or https://"),
        ("example.com/v1", "URL must start with http:// or https://"),
        ("https:///v1/chat", "URL must include a host name"),
        ("https://user:secret@example.com/v1", "credentials"),
        ("https://generativelanguage.googleapis.com/v1beta?key=AIzaXYZ", "Do not put the key in the URL"),
    ],
)
def test_target_rejects_bad_urls(db, url, message):
    with pytest.raises(ValidationError) as info:
        Target(name="t", api_style="gemini", url=url, model="m").full_clean()
    assert message in " ".join(info.value.message_dict["url"])


GEMINI_MODEL_URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash"


@pytest.mark.parametrize(
    ("style", "url", "ok"),
    [
        ("openai", "https://api.openai.com/v1/chat/completions", False),
        ("anthropic", "https://api.anthropic.com/v1/messages", False),
        ("gemini", "https://generativelanguage.googleapis.com/v1beta", False),
        ("gemini", f"{GEMINI_MODEL_URL}:streamGenerateContent", True),
        ("gemini", f"{GEMINI_MODEL_URL}:generateContent", True),
        ("http", "https://example.com/health", True),
    ],
)
def test_target_model_may_be_blank_only_where_the_url_suffices(db, style, url, ok):
    target = Target(name="t", api_style=style, url=url, model="")
    if ok:
        target.full_clean()
    else:
        with pytest.raises(ValidationError) as info:
            target.full_clean()
        assert "model" in info.value.message_dict


@pytest.mark.parametrize(
    ("headers", "ok"),
    [
        ({}, True),
        ({"anthropic-version": "2023-06-01", "x-trace": "${TRACE_ID}"}, True),
        ({"x-api-key": "${ANTHROPIC_API_KEY}"}, True),
        ({"Authorization": "Bearer ${TOKEN}"}, True),
        ({"Authorization": "Bearer sk-abc"}, False),
        ({"Authorization": "Bearer sk-abc ${TOKEN}"}, False),
        ({"x-goog-api-key": "AIzaSyExample"}, False),
        ({"api-key": "sk-${SUFFIX}"}, False),
        ({"x-trace": "${1BAD}"}, False),
        ({"x-nested": {"a": "b"}}, False),
        ({"x-number": 3}, False),
        ({"bad header": "v"}, False),
        ({"x-inject": "a\r\nHost: evil"}, False),
        (["not", "an", "object"], False),
    ],
)
def test_target_headers_validation(db, headers, ok):
    target = Target(name="t", api_style="http", url="https://example.com/", headers=headers)
    if ok:
        target.full_clean()
    else:
        with pytest.raises(ValidationError) as info:
            target.full_clean()
        assert "headers" in info.value.message_dict


def test_target_coordinates_come_in_pairs_and_ranges(db):
    base = {"name": "t", "api_style": "http", "url": "https://example.com/"}
    with pytest.raises(ValidationError) as info:
        Target(**base, latitude=10.0).full_clean()
    assert "longitude" in info.value.message_dict
    with pytest.raises(ValidationError) as info:
        Target(**base, latitude=10.0, longitude=181.0).full_clean()
    assert info.value.message_dict["longitude"] == ["Longitude must be between -180 and 180."]
    Target(**base, latitude=-33.87, longitude=151.21).full_clean()


def test_target_ca_bundle_is_a_name_inside_the_workers_ca_dir(db):
    with pytest.raises(ValidationError) as info:
        Target(name="t", api_style="http", url="https://example.com/", ca_bundle="/etc/latency/ca.pem").full_clean()
    assert "LATENCY_CA_DIR" in info.value.message_dict["ca_bundle"][0]
    Target(name="t", api_style="http", url="https://example.com/", ca_bundle="ca.pem").full_clean()


def test_probe_timeout_is_checked_against_interval_in_the_database_too(make_probe):
    # Rows written outside a form skip clean(); the CHECK constraint still holds.
    probe = make_probe()
    probe.timeout_seconds = probe.interval_seconds
    with pytest.raises(IntegrityError, match="probe_timeout_within_interval"), transaction.atomic():
        probe.save()


def test_probe_timeout_respects_the_deployment_ceiling(make_probe, settings):
    settings.LATENCY_MAX_PROBE_TIMEOUT = 120
    probe = make_probe(interval_seconds=600, timeout_seconds=30)
    probe.timeout_seconds = 200
    with pytest.raises(ValidationError) as info:
        probe.full_clean()
    assert "at most 120 seconds" in info.value.message_dict["timeout_seconds"][0]
