"""What the ingest cannot store is kept whole as a dead letter with its
reason, never dropped, and never costs the valid payloads beside it: seen
in the admin (read-only), counted on the dashboard, pruned with raw rows."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.test import override_settings
from django.urls import reverse

from probes.ingest import store, store_with_retry
from probes.models import DeadLetter, Measurement
from probes.rollups import prune_raw
from tests.factories import region_credential, sealed_results
from tests.pipeline.test_ingest_validation import BASE, payload


@pytest.fixture
def probe(make_probe):
    return make_probe()


@pytest.fixture
def region(probe):
    return probe.regions.get()


def five_valid(probe, region) -> list[dict]:
    return [payload(probe, region, BASE + timedelta(seconds=k)) for k in range(5)]


@pytest.mark.parametrize("started_at", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:00-14:00"])
def test_a_time_out_of_range_in_utc_is_a_dead_letter_and_the_five_valid_rows_beside_it_are_stored(
    probe, region, started_at
):
    bad = payload(probe, region, BASE - timedelta(seconds=1))
    bad["result"]["started_at"] = started_at
    sent = copy.deepcopy(bad)
    valid = five_valid(probe, region)
    items = store([valid[0], valid[1], bad, *valid[2:]])
    assert sorted(Measurement.objects.values_list("scheduled_for", flat=True)) == [
        BASE + timedelta(seconds=k) for k in range(5)
    ]
    assert len(items) == 5
    (letter,) = DeadLetter.objects.all()
    assert letter.payload == sent  # whole, as received
    assert "started_at" in letter.reason and "out of range" in letter.reason
    assert (letter.probe_id, letter.target_id, letter.region_id) == (probe.id, probe.target_id, region.id)
    assert letter.source == "ingest" and letter.worker == "worker-lagos-1"


def test_the_same_out_of_range_slot_time_is_a_dead_letter_too(probe, region):
    bad = payload(probe, region, BASE)
    bad["scheduled_for"] = "0001-01-01T00:00:00+14:00"
    store([bad, *five_valid(probe, region)[1:]])
    assert Measurement.objects.count() == 4
    assert "scheduled_for" in DeadLetter.objects.get().reason


def test_a_time_from_a_broken_clock_is_a_dead_letter(probe, region):
    early = payload(probe, region, BASE)
    early["result"]["started_at"] = "1970-01-01T00:00:00+00:00"
    future = payload(probe, region, BASE + timedelta(seconds=1))
    future["result"]["started_at"] = (datetime.now(UTC) + timedelta(days=30)).isoformat()
    store([early, future, payload(probe, region, BASE + timedelta(seconds=2))])
    assert list(Measurement.objects.values_list("scheduled_for", flat=True)) == [BASE + timedelta(seconds=2)]
    assert DeadLetter.objects.filter(reason__contains="not a plausible time").count() == 2


def test_a_payload_whose_probe_target_and_region_disagree_is_a_dead_letter_with_the_reason(make_probe, make_region):
    lagos, london, sydney = make_region(), make_region(), make_region()
    probe = make_probe(regions=[lagos, london])
    other = make_probe(regions=[sydney])
    wrong_target = payload(probe, lagos, BASE)
    wrong_target["target_id"] = other.target_id  # exists, but is another probe's target
    wrong_region = payload(probe, sydney, BASE + timedelta(seconds=1))  # exists, but not this probe's
    good = payload(probe, london, BASE + timedelta(seconds=2))
    store([wrong_target, wrong_region, good])
    assert list(Measurement.objects.values_list("region_id", flat=True)) == [london.id]
    reasons = {letter.region_id: letter.reason for letter in DeadLetter.objects.all()}
    assert reasons[lagos.id] == f"target {other.target_id} is not the target of probe {probe.id} ({probe.target_id})"
    assert reasons[sydney.id] == f"region {sydney.id} is not one of the regions of probe {probe.id}"


def test_payloads_of_unknown_ids_are_dead_letters(probe, region, make_region):
    gone = make_region()
    gone_id = gone.id
    gone.delete()
    unknown_probe = payload(probe, region, BASE)
    unknown_probe["probe_id"] = probe.id + 10_000
    unknown_target = payload(probe, region, BASE + timedelta(seconds=1))
    unknown_target["target_id"] = probe.target_id + 10_000
    unknown_region = payload(probe, region, BASE + timedelta(seconds=2))
    unknown_region["region_id"] = gone_id
    absurd = payload(probe, region, BASE + timedelta(seconds=3))
    absurd["probe_id"] = 2**70
    store([unknown_probe, unknown_target, unknown_region, absurd, payload(probe, region, BASE + timedelta(seconds=4))])
    assert Measurement.objects.count() == 1
    letters = {json.dumps(letter.payload, sort_keys=True): letter for letter in DeadLetter.objects.all()}
    assert len(letters) == 4
    assert letters[json.dumps(unknown_probe, sort_keys=True)].reason == f"probe {probe.id + 10_000} does not exist"
    assert "is not the target of probe" in letters[json.dumps(unknown_target, sort_keys=True)].reason
    assert "is not one of the regions" in letters[json.dumps(unknown_region, sort_keys=True)].reason
    absurd_letter = letters[json.dumps(absurd, sort_keys=True)]
    assert "out of range" in absurd_letter.reason
    assert absurd_letter.payload["probe_id"] == 2**70 and absurd_letter.probe_id is None


def test_what_jsonb_cannot_hold_is_kept_whole_as_text(probe, region):
    nan = payload(probe, region, BASE, ttft_ms=float("nan"))
    nul = payload(probe, region, BASE + timedelta(seconds=1), outcome="\x00boom")
    store([nan, nul, "not even a dict", None])
    texts = sorted(DeadLetter.objects.exclude(payload_text="").values_list("payload_text", flat=True))
    assert len(texts) == 3
    assert texts[0] == "null"
    assert any('"ttft_ms": NaN' in t for t in texts) and any("\\u0000boom" in t for t in texts)
    assert DeadLetter.objects.get(payload="not even a dict").reason == "payload is not a measurement message"


def test_a_row_the_database_refuses_is_a_dead_letter_and_the_rest_of_the_batch_is_stored(probe, region):
    # Validation cannot foresee every refusal: a constraint it does not know
    # of (added here, rolled back with the test) stands for one.
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("ALTER TABLE probes_measurement ADD CONSTRAINT test_refuses CHECK (worker <> 'refuse-me')")
    refused = payload(probe, region, BASE)
    refused["worker"] = "refuse-me"
    assert store_with_retry([refused, *five_valid(probe, region)[1:]]) == 4
    assert Measurement.objects.count() == 4
    letter = DeadLetter.objects.get()
    assert letter.payload == refused
    assert "the database refused it" in letter.reason and "test_refuses" in letter.reason


def test_a_task_message_with_garbage_arguments_is_a_dead_letter_and_its_neighbours_are_stored(probe, region):
    from probes.ingest import ingest_messages

    good = five_valid(probe, region)
    credential = region_credential(region)
    stored = ingest_messages(
        [
            ((sealed_results(region, good[:3], credential),), {}, "t1"),
            ((5, 6), {}, "t2"),
            ((sealed_results(region, good[3:4], credential),), {}, "t3"),
            ((), {"x": 1}, "t4"),
        ]
    )
    assert stored == 4 and Measurement.objects.count() == 4
    letters = list(DeadLetter.objects.all())
    assert sorted(json.dumps(letter.payload, sort_keys=True) for letter in letters) == [
        json.dumps({"args": [5, 6], "kwargs": {}}, sort_keys=True),
        json.dumps({"args": [], "kwargs": {"x": 1}}, sort_keys=True),
    ]
    assert all("expected one argument" in letter.reason for letter in letters)


# --- the admin, the dashboard, retention ------------------------------------


def make_letter(received_at: datetime, **fields) -> DeadLetter:
    fields = {"source": "ingest", "reason": "payload is not a measurement message", "payload": {"a": 1}, **fields}
    return DeadLetter.objects.create(received_at=received_at, **fields)


def test_dead_letters_are_read_only_in_the_admin_even_for_a_superuser(admin_client):
    letter = make_letter(datetime.now(UTC), payload={"probe_id": 7, "note": "<script>x</script>"})
    listing = admin_client.get(reverse("admin:probes_deadletter_changelist"))
    assert listing.status_code == 200
    assert "payload is not a measurement message" in listing.content.decode()
    detail = admin_client.get(reverse("admin:probes_deadletter_change", args=[letter.pk]))
    assert detail.status_code == 200
    body = detail.content.decode()
    assert "&lt;script&gt;x&lt;/script&gt;" in body and "<script>x</script>" not in body
    assert 'name="_save"' not in body
    assert admin_client.get(reverse("admin:probes_deadletter_add")).status_code == 403
    assert (
        admin_client.post(reverse("admin:probes_deadletter_delete", args=[letter.pk]), {"post": "yes"}).status_code
        == 403
    )
    assert (
        admin_client.post(
            reverse("admin:probes_deadletter_change", args=[letter.pk]), {"reason": "edited", "source": "x"}
        ).status_code
        == 403
    )
    letter.refresh_from_db()
    assert letter.reason == "payload is not a measurement message"
    from django.contrib.admin.sites import site

    model_admin = site._registry[DeadLetter]
    request = listing.wsgi_request
    assert request.user.is_superuser
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request, letter)
    assert not model_admin.has_delete_permission(request, letter)
    assert "delete_selected" not in model_admin.get_actions(request)


def test_the_dashboard_health_line_counts_the_last_24_hours_and_links_staff_to_the_list(
    client, django_user_model, make_probe
):
    make_probe()
    now = datetime.now(UTC)
    for minutes in (1, 60, 23 * 60):
        make_letter(now - timedelta(minutes=minutes))
    make_letter(now - timedelta(hours=25))
    viewer = django_user_model.objects.create_user(username="viewer", password="a-long-test-password-9931")
    client.force_login(viewer)
    page = client.get("/").content.decode()
    assert "3 rejected messages in the last 24 h" in page
    assert reverse("admin:probes_deadletter_changelist") not in page
    staff = django_user_model.objects.create_superuser(username="root", password="a-long-test-password-9931")
    client.force_login(staff)
    page = client.get("/").content.decode()
    assert f'<a href="{reverse("admin:probes_deadletter_changelist")}">3 rejected messages in the last 24 h</a>' in page
    DeadLetter.objects.all().delete()
    assert "rejected message" not in client.get("/").content.decode()


@override_settings(LATENCY_RETENTION_DAYS=30, LATENCY_PRUNE_BATCH=100)
def test_pruning_raw_rows_removes_dead_letters_older_than_the_retention(db):
    now = datetime(2026, 11, 30, 12, 30, tzinfo=UTC)
    old = [make_letter(now - timedelta(days=31, minutes=k)) for k in range(150)]
    kept = make_letter(now - timedelta(days=29))
    prune_raw(now)
    assert list(DeadLetter.objects.values_list("pk", flat=True)) == [kept.pk]
    assert old  # 150 of them: more than one batch
