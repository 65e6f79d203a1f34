"""A threshold below the round trip that light in fiber needs from the regions to the target would fire for ever:
the rule is refused, naming the region and the floor. Above the floor, or when the quorum needs regions that are
close enough, it is accepted."""

from probes.alerts.rules import refusals
from tests.factories import ProbeFactory, RegionFactory, TargetFactory


def fields(**given):
    rule = {
        "metric": "connect",
        "percentile": "p50",
        "threshold_ms": 50.0,
        "threshold_percent": None,
        "baseline_factor": None,
        "window_minutes": 10,
        "min_samples": 5,
        "min_regions": 1,
        "min_regions_percent": None,
        "region_ids": None,
    }
    return {**rule, **given}


def test_a_threshold_below_the_fiber_floor_from_lagos_to_virginia_is_refused(db):
    lagos = RegionFactory(city="Lagos", latitude=6.52, longitude=3.38)
    ashburn = RegionFactory(city="Ashburn", latitude=39.04, longitude=-77.49)
    target = TargetFactory(latitude=39.04, longitude=-77.49)
    ProbeFactory(target=target, regions=[lagos, ashburn])

    problems = refusals(**fields(target_id=target.id))

    assert "always fire" in problems["threshold_ms"]
    assert "round trip from Lagos to the target" in problems["threshold_ms"]
    # Lagos alone is far: a quorum of two needs Ashburn too, which can meet 50 ms.
    assert "threshold_ms" not in refusals(**fields(target_id=target.id, min_regions=2))
    assert "threshold_ms" not in refusals(**fields(target_id=target.id, threshold_ms=200.0))
    # Both conditions must hold with a baseline factor: that one can still be met.
    assert "threshold_ms" not in refusals(**fields(target_id=target.id, baseline_factor=2.0))
