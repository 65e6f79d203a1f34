"""`slo_check --json` prints one JSON array with the same figures the lines show, and the same exit status."""

from __future__ import annotations

import json

import pytest

from tests.slos_check.conftest import run


def test_the_array_holds_each_objectives_burn_attainment_budget_status_and_verdict(burning):
    status, out = run("--json", "--now", burning.now.isoformat())
    assert status == 1
    objects = {o["name"]: o for o in json.loads(out)}
    assert list(objects) == ["chat new", "chat off", "chat p50", "chat p90", "chat p99"]
    p99 = objects["chat p99"]
    assert p99["window"] == "1h"
    assert p99["burn_rate"] == pytest.approx((2 / 20) / (1 - 0.99))
    assert p99["attainment"] == pytest.approx(18 / 20)
    assert p99["budget_remaining_ratio"] == pytest.approx(1 - (2 / 20) / (1 - 0.99))
    assert (p99["status"], p99["fails"], p99["objective_percent"]) == ("exhausted", True, 99.0)
    assert p99["exact_since"] is not None
    assert objects["chat p90"]["fails"] is False and objects["chat p90"]["verdict"] == "pass"
    off = objects["chat off"]
    assert (off["burn_rate"], off["attainment"], off["status"], off["fails"]) == (None, None, "disabled", False)
    assert objects["chat new"]["status"] == "rebuilding" and objects["chat new"]["exact_since"] is None
    assert {frozenset(o) for o in objects.values()} == {frozenset(p99)}
