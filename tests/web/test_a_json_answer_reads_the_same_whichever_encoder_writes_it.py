"""latency.api.respond writes a payload with json's encoder in one pass and walks it with json_safe only when
that pass refuses a value (NaN, an infinity, a key json cannot write). Both paths must write the same text, and
what reaches the browser is strict JSON either way."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from decimal import Decimal

import numpy as np
import pytest

from latency.api import json_safe, respond


def strict(body: bytes):
    return json.loads(body, parse_constant=lambda name: pytest.fail(f"sent {name}"))


def series_like() -> dict:
    at = datetime(2026, 12, 4, 10, 30, 15, 123456, tzinfo=UTC)
    return {
        "figure": {"data": [{"type": "heatmap", "z": [[1.5, None], [2.25, 3.0]]}], "layout": {"height": 300}},
        "rows": [
            {"bucket_start": at, "at": at, "region": "api-tokyo", "p50": 812.5, "p95": None, "samples": 12},
            {"bucket_start": at, "at": at, "region": "api-lima", "p50": np.float64(90.125), "samples": np.int64(3)},
        ],
        "day": date(2026, 12, 4),
        "share": Decimal("0.25"),
        "regions": frozenset({"api-tokyo"}),
        "counts": np.array([1, 2, 3]),
        "keys": {1: "one", 2.5: "two and a half", False: "no", None: "none"},
        "lines": False,
        "no_data": "",
    }


def test_a_payload_json_can_write_comes_out_as_json_safe_would_write_it():
    payload = series_like()
    response = respond(payload)
    assert response.content.decode() == json.dumps(json_safe(payload), allow_nan=False)
    body = strict(response.content)
    assert body["rows"][0]["at"] == "2026-12-04T10:30:15.123456+00:00"
    assert body["rows"][1]["samples"] == 3 and body["counts"] == [1, 2, 3]
    assert body["keys"] == {"1": "one", "2.5": "two and a half", "false": "no", "null": "none"}
    assert body["share"] == 0.25 and body["regions"] == ["api-tokyo"] and body["day"] == "2026-12-04"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), Decimal("NaN"), np.float64("nan")])
def test_a_value_json_refuses_is_written_as_null(bad):
    payload = series_like()
    payload["rows"][1]["p95"] = bad
    response = respond(payload)
    assert response.content.decode() == json.dumps(json_safe(payload), allow_nan=False)
    assert strict(response.content)["rows"][1]["p95"] is None


def test_a_key_json_cannot_write_is_written_as_text():
    payload = {"by_pair": {("api-tokyo", 3): 1.0}, "at": datetime(2026, 12, 4, tzinfo=UTC)}
    assert strict(respond(payload).content) == {"by_pair": {"('api-tokyo', 3)": 1.0}, "at": "2026-12-04T00:00:00+00:00"}


def test_the_answer_is_json_and_never_cached():
    response = respond({"rows": []}, status=400)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
