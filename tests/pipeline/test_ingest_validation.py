"""The ingest stores what region workers send faithfully, keeps what it
cannot trust as a dead letter without losing the rest of the batch, and
records a slot once."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from probes.ingest import store
from probes.models import DeadLetter, Measurement
from tests.factories import measurement_payload as payload

BASE = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)


@pytest.fixture
def probe(make_probe):
    return make_probe()


@pytest.fixture
def region(probe):
    return probe.regions.get()


def test_a_valid_payload_is_stored_with_its_values_and_nulls_kept_as_null(probe, region):
    when = BASE
    store([payload(probe, region, when)])
    row = Measurement.objects.get()
    assert (row.probe_id, row.target_id, row.region_id) == (probe.id, probe.target_id, region.id)
    assert row.scheduled_for == when
    assert row.started_at == when + timedelta(milliseconds=250)
    assert row.worker == "worker-lagos-1"
    assert (row.outcome, row.connection, row.http_status, row.http_version) == ("ok", "warm", 200, "HTTP/1.1")
    assert row.remote_addr == "203.0.113.7:443"
    # Floats come back bit for bit.
    assert row.ttfb_ms == 120.5
    assert row.first_event_ms == 180.25
    assert row.ttft_ms == 250.123456
    assert row.total_ms == 900.000001
    assert row.tokens_per_s == 33.333333
    assert (row.itl_p50_ms, row.itl_p95_ms, row.itl_max_ms) == (12.5, 19.75, 22.0)
    assert (row.output_tokens, row.tokens_estimated, row.response_bytes) == (5, False, 1234)
    # A warm call had no DNS, connect or TLS phase: NULL, never 0.
    assert row.dns_ms is None and row.connect_ms is None and row.tls_ms is None
    assert row.ttfat_ms is None and row.retry_after_s is None
    assert row.error is None and row.error_type is None
    nulls = Measurement.objects.filter(dns_ms__isnull=True, connect_ms__isnull=True, tls_ms__isnull=True)
    assert nulls.count() == 1
    assert not Measurement.objects.filter(dns_ms=0).exists()


def test_a_failed_call_keeps_its_missing_phases_as_null(probe, region):
    store(
        [
            payload(
                probe,
                region,
                BASE,
                outcome="connect_error",
                error="connection refused",
                http_status=None,
                http_version=None,
                remote_addr=None,
                ttfb_ms=None,
                first_event_ms=None,
                ttft_ms=None,
                output_tokens=None,
                tokens_estimated=None,
                tokens_per_s=None,
                itl_p50_ms=None,
                itl_p95_ms=None,
                itl_max_ms=None,
                response_bytes=None,
                dns_ms=0.75,
                total_ms=3.5,
            )
        ]
    )
    row = Measurement.objects.get()
    assert row.outcome == "connect_error" and row.error == "connection refused"
    assert row.dns_ms == 0.75 and row.total_ms == 3.5
    for name in (
        "http_status",
        "ttfb_ms",
        "ttft_ms",
        "output_tokens",
        "tokens_estimated",
        "tokens_per_s",
        "response_bytes",
    ):
        assert getattr(row, name) is None, name


def _without(key):
    def edit(p):
        del p[key]

    return edit


def _set(key, value):
    def edit(p):
        p[key] = value

    return edit


def _set_result(key, value):
    def edit(p):
        p["result"][key] = value

    return edit


NAIVE = BASE.replace(tzinfo=None)

INVALID = {
    "unknown outcome": _set_result("outcome", "exploded"),
    "negative ttft": _set_result("ttft_ms", -1.0),
    "NaN ttft": _set_result("ttft_ms", float("nan")),
    "infinite total": _set_result("total_ms", float("inf")),
    "string ttft": _set_result("ttft_ms", "250.0"),
    "string http status": _set_result("http_status", "200"),
    "missing probe_id": _without("probe_id"),
    "string probe_id": _set("probe_id", "1"),
    "naive scheduled_for": _set("scheduled_for", (NAIVE + timedelta(seconds=1)).isoformat()),
    "garbage scheduled_for": _set("scheduled_for", "yesterday"),
    "naive started_at": _set_result("started_at", NAIVE.isoformat()),
    "bool output_tokens": _set_result("output_tokens", True),
    "bool http status": _set_result("http_status", True),
    "bool region_id": _set("region_id", True),
    "negative output_tokens": _set_result("output_tokens", -3),
    "http status beyond the column": _set_result("http_status", 40000),
    "result not a dict": _set("result", "ok"),
}


@pytest.mark.parametrize("edit", INVALID.values(), ids=INVALID.keys())
def test_an_invalid_payload_is_dead_lettered_and_the_rest_of_its_batch_is_stored(probe, region, edit):
    good_slot = BASE + timedelta(minutes=1)
    bad = payload(probe, region, BASE)
    edit(bad)
    items = store([bad, payload(probe, region, good_slot), "not even a dict"])
    assert list(Measurement.objects.values_list("scheduled_for", flat=True)) == [good_slot]
    assert len(items) == 1
    assert DeadLetter.objects.count() == 2


def test_payloads_for_unknown_probe_target_or_region_ids_are_dead_lettered(probe, region, make_region):
    gone = make_region()
    gone_id = gone.id
    gone.delete()
    unknown_probe = payload(probe, region, BASE)
    unknown_probe["probe_id"] = probe.id + 10_000
    unknown_target = payload(probe, region, BASE + timedelta(seconds=1))
    unknown_target["target_id"] = probe.target_id + 10_000
    unknown_region = payload(probe, region, BASE + timedelta(seconds=2))
    unknown_region["region_id"] = gone_id
    absurd_id = payload(probe, region, BASE + timedelta(seconds=3))
    absurd_id["probe_id"] = 2**70
    good = payload(probe, region, BASE + timedelta(seconds=4))
    items = store([unknown_probe, unknown_target, unknown_region, absurd_id, good])
    assert list(Measurement.objects.values_list("scheduled_for", flat=True)) == [BASE + timedelta(seconds=4)]
    assert [i["region_id"] for i in items] == [region.id]
    assert DeadLetter.objects.count() == 4


def test_the_same_slot_twice_in_one_batch_is_stored_once(probe, region):
    first = payload(probe, region, BASE, ttft_ms=111.0)
    again = payload(probe, region, BASE, ttft_ms=222.0)
    items = store([first, again])
    assert Measurement.objects.count() == 1
    assert Measurement.objects.get().ttft_ms == 111.0
    assert len(items) == 1


def test_the_same_slot_in_two_batches_is_stored_once_and_announced_once(probe, region):
    first = store([payload(probe, region, BASE, ttft_ms=111.0)])
    # The same slot written with another UTC offset is still the same slot.
    resent = payload(probe, region, BASE, ttft_ms=222.0)
    resent["scheduled_for"] = BASE.astimezone(datetime.fromisoformat("2025-01-01T00:00:00+05:30").tzinfo).isoformat()
    second = store([resent])
    assert Measurement.objects.count() == 1
    assert Measurement.objects.get().ttft_ms == 111.0
    assert len(first) == 1 and second == []


def test_the_same_slot_from_another_region_is_a_separate_row(make_region, make_probe):
    lagos, london = make_region(), make_region()
    probe = make_probe(regions=[lagos, london])
    store([payload(probe, lagos, BASE), payload(probe, london, BASE)])
    assert sorted(Measurement.objects.values_list("region_id", flat=True)) == sorted([lagos.id, london.id])


def test_error_texts_longer_than_their_columns_are_truncated_not_failing(probe, region):
    long_error = "upstream said: " + "x" * 5000
    long_type = "rate_limit_" + "y" * 500
    store(
        [
            payload(
                probe,
                region,
                BASE,
                outcome="http_error",
                http_status=429,
                error=long_error,
                error_type=long_type,
                http_version="HTTP/" + "9" * 40,
                remote_addr="2001:db8::1" * 20,
            )
        ]
    )
    row = Measurement.objects.get()
    assert row.error == long_error[:2000]
    assert row.error_type == long_type[: Measurement._meta.get_field("error_type").max_length]
    assert len(row.http_version) == Measurement._meta.get_field("http_version").max_length
    assert len(row.remote_addr) == Measurement._meta.get_field("remote_addr").max_length


def test_error_texts_postgres_cannot_hold_are_cleaned_not_failing_the_batch(probe, region):
    # A NUL byte or an unpaired surrogate (from a provider's body) used to fail
    # the INSERT, losing every measurement of the batch.
    store(
        [
            payload(probe, region, BASE, outcome="protocol_error", error="bad\x00body", error_type="x\x00y"),
            payload(probe, region, BASE + timedelta(seconds=1), outcome="protocol_error", error="half \ud83d pair"),
            payload(probe, region, BASE + timedelta(seconds=2)),
        ]
    )
    errors = dict(Measurement.objects.values_list("scheduled_for", "error"))
    assert len(errors) == 3
    assert errors[BASE] == "badbody"
    assert Measurement.objects.get(scheduled_for=BASE).error_type == "xy"
    assert errors[BASE + timedelta(seconds=1)].startswith("half ")
    assert "\ud83d" not in errors[BASE + timedelta(seconds=1)]
    assert errors[BASE + timedelta(seconds=2)] is None


def test_broadcast_items_carry_the_id_and_ttft_of_new_rows_only(probe, region):
    first = store([payload(probe, region, BASE, ttft_ms=101.5)])
    (row,) = Measurement.objects.all()
    assert [(i["id"], i["ttft_ms"]) for i in first] == [(row.id, 101.5)]
    later = BASE + timedelta(minutes=1)
    second = store([payload(probe, region, BASE, ttft_ms=101.5), payload(probe, region, later, ttft_ms=202.25)])
    new = Measurement.objects.get(scheduled_for=later)
    assert [(i["id"], i["ttft_ms"]) for i in second] == [(new.id, 202.25)]
    assert second[0]["started_at"] == (later + timedelta(milliseconds=250)).isoformat()
    assert store([payload(probe, region, later)]) == []


def test_a_failed_call_is_announced_with_a_null_ttft(probe, region):
    (item,) = store([payload(probe, region, BASE, outcome="timeout", ttft_ms=None, total_ms=30000.0)])
    assert item["ttft_ms"] is None and item["outcome"] == "timeout"
    assert not math.isnan(item["total_ms"]) and item["total_ms"] == 30000.0
