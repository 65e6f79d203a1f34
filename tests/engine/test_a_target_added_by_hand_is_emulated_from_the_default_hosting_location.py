"""Under emulated geography, a target that names no hosting location (one added by hand in the demo) pays the round
trip to the stated default location (probes.geo.DEFAULT_HOSTING) instead of reading a few milliseconds from every
region of the world, and the target's admin page says where that is."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from probes import geo

TOKYO = (35.6762, 139.6503)
FRANKFURT = (50.1109, 8.6821)


@pytest.fixture
def hand_added(make_region, make_target, make_probe):
    tokyo = make_region(latitude=TOKYO[0], longitude=TOKYO[1])
    frankfurt = make_region(latitude=FRANKFURT[0], longitude=FRANKFURT[1])
    probe = make_probe(regions=[tokyo, frankfurt], target=make_target(latitude=None, longitude=None))
    return probe, {tokyo.slug: TOKYO, frankfurt.slug: FRANKFURT}


def specs_of(probe) -> dict[str, dict]:
    from probes.scheduling import due_slots

    return {s.region_slug: s.spec for s in due_slots(datetime.now(UTC)) if s.probe_id == probe.id}


def test_each_region_pays_its_round_trip_to_the_default_location(settings, hand_added):
    settings.LATENCY_EMULATED_GEOGRAPHY = True
    probe, places = hand_added
    specs = specs_of(probe)
    assert set(specs) == set(places)
    for slug, place in places.items():
        want = geo.emulated_rtt_ms(*place, *geo.DEFAULT_HOSTING)
        assert specs[slug]["emulated_rtt_ms"] == pytest.approx(want, abs=0.001)
        # And says which region the call stands for (a mock server may treat one region differently).
        assert specs[slug]["headers"][geo.EMULATED_REGION_HEADER] == slug
    tokyo, frankfurt = (specs[slug]["emulated_rtt_ms"] for slug in places)
    assert tokyo > frankfurt > 50, "Tokyo is farther from Ashburn than Frankfurt, and Frankfurt an ocean away"


def test_without_emulated_geography_nothing_is_added(settings, hand_added):
    settings.LATENCY_EMULATED_GEOGRAPHY = False
    probe, _ = hand_added
    for spec in specs_of(probe).values():
        assert spec["emulated_rtt_ms"] == 0
        assert geo.EMULATED_REGION_HEADER not in spec["headers"]


def test_the_target_page_names_the_default_location(settings, admin_client, make_target):
    settings.LATENCY_EMULATED_GEOGRAPHY = True
    target = make_target(latitude=None, longitude=None)
    page = admin_client.get(f"/admin/probes/target/{target.pk}/change/")
    assert page.status_code == 200
    assert geo.DEFAULT_HOSTING_NAME in page.content.decode()
    settings.LATENCY_EMULATED_GEOGRAPHY = False
    assert (
        geo.DEFAULT_HOSTING_NAME not in admin_client.get(f"/admin/probes/target/{target.pk}/change/").content.decode()
    )
