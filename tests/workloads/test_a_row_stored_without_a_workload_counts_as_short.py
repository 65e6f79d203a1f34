"""A row stored before workloads were recorded (workload NULL) was sent with the short prompt: the workload readings
count it in the short class, as every other reading of one workload does (probes.readings.workload), not in a class
of its own."""

from __future__ import annotations

from datetime import timedelta

from probes import readings


def test_rows_without_a_workload_join_the_short_class(make_probe, make_region, add_calls, now):
    region = make_region()
    probe = make_probe(regions=[region])
    since = now - timedelta(hours=1)
    add_calls(probe, region, since, [
        {"workload": None, "ttft_ms": 100.0},
        {"workload": None, "ttft_ms": 200.0},
        {"workload": "short", "ttft_ms": 300.0},
        {"workload": "prompt_10k", "ttft_ms": 900.0, "input_tokens": 10_000},
    ])  # fmt: skip

    (reading,) = readings.workloads([probe.target_id], since, now).regions
    classes = {c.workload: c for c in reading.classes}
    assert sorted(classes) == ["prompt_10k", "short"]
    assert classes["short"].calls == 3
    assert classes["short"].ttft_p50_ms == 200.0
    assert [c.workload for c in reading.classes] == ["short", "prompt_10k"]
