"""`slo_check` prints one line per objective (burn over the window, attainment, budget left, status) and exits 1
when any objective checked burns faster than 1x over the window; exactly 1x passes, and so does a window without
eligible calls."""

from __future__ import annotations

from datetime import timedelta

from tests.slos_check.conftest import run


def test_every_objective_has_a_line_and_the_fast_burner_fails_the_gate(burning):
    status, out = run("--now", burning.now.isoformat())
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["chat new", "chat off", "chat p50", "chat p90", "chat p99"]
    by_name = {line.split(":")[0]: line for line in lines}
    # 2 bad of 20 over the last hour: 0.1 of the calls against the 1 % the objective allows.
    assert by_name["chat p99"].startswith("chat p99: burn 1h 10.00x, attainment 90.000% (objective 99%")
    assert "budget remaining -900.0%, status exhausted: FAIL" in by_name["chat p99"]
    assert by_name["chat p90"].startswith("chat p90: burn 1h 1.00x")
    assert by_name["chat p90"].endswith(": pass")
    assert by_name["chat p50"].startswith("chat p50: burn 1h 0.20x")
    assert status == 1


def test_objectives_burning_at_most_once_pass(burning):
    assert run("--slo", "chat p90", "--slo", "chat p50", "--now", burning.now.isoformat())[0] == 0
    assert run("--slo", "chat p90", "chat p50", "--now", burning.now.isoformat())[0] == 0


def test_the_window_chosen_is_the_one_judged(burning):
    # The last 5 minutes hold 2 bad calls of 6: a third, over 3x what 90 % allows.
    status, out = run("--slo", "chat p90", "--window", "5m", "--now", burning.now.isoformat())
    assert (status, out.split(",")[0]) == (1, "chat p90: burn 5m 3.33x")
    assert run("--slo", "chat p99", "--window", "3d", "--now", burning.now.isoformat())[0] == 1


def test_a_window_without_eligible_calls_is_not_judged(burning):
    later = burning.now + timedelta(hours=2)  # the last hour holds none of the calls
    status, out = run("--slo", "chat p99", "--now", later.isoformat())
    assert status == 0
    assert out.strip().startswith("chat p99: burn 1h -, attainment 90.000%")
    assert out.strip().endswith("not judged (no eligible calls in 1h)")
