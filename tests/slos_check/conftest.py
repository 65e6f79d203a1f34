"""`manage.py slo_check` over objectives with known calls, stored through ingest's real path.

- `burning`: one target measured from london (8 good then 2 bad calls) and tokyo (10 good), in minutes 50 to 59 of
  a past hour; objectives over it at 99 % (burns 10x over 1 h: fails), 90 % (exactly 1x: passes), 50 % (0.2x),
  one disabled and one never rebuilt (rebuilding). A `Burning` with the objectives by name and `now`, minute 62
  (the 5-minute window then holds minutes 57 to 59: 6 calls, 2 of them bad; every longer one all 20, 2 bad).
- `run(*args)`: call_command("slo_check", *args) -> (exit status, stdout).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from tests.factories import ProbeFactory, RegionFactory, ServiceLevelObjectiveFactory, TargetFactory
from tests.slos_counting.conftest import current, hour_ago, ingest


@dataclass
class Burning:
    now: datetime
    objectives: dict


@pytest.fixture
def burning(transactional_db) -> Burning:
    london, tokyo = RegionFactory(slug="test-london"), RegionFactory(slug="test-tokyo")
    probe = ProbeFactory(target=TargetFactory(name="chat"), regions=[london, tokyo])
    objectives = {
        name: current(ServiceLevelObjectiveFactory(name=name, targets=[probe.target], objective_percent=percent))
        for name, percent in (("chat p99", 99), ("chat p90", 90), ("chat p50", 50))
    }
    objectives["chat off"] = ServiceLevelObjectiveFactory(name="chat off", targets=[probe.target], enabled=False)
    objectives["chat new"] = ServiceLevelObjectiveFactory(name="chat new", targets=[probe.target])
    start = hour_ago()
    london_calls = [(start + timedelta(minutes=50 + k), {"ttft_ms": 200.0 if k < 8 else 900.0}) for k in range(10)]
    assert ingest(probe, london, london_calls) == 10
    assert ingest(probe, tokyo, [(start + timedelta(minutes=50 + k), {"ttft_ms": 200.0}) for k in range(10)]) == 10
    return Burning(now=start + timedelta(minutes=62), objectives=objectives)


def run(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("slo_check", *args, stdout=out)
    except SystemExit as exit:
        return int(exit.code), out.getvalue()
    return 0, out.getvalue()
