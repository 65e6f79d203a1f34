"""Four exports of 100,000 GenAI spans each, sent at once (gzip, under both body caps), raise the web process's
peak resident memory by at most 100 MB: each is counted before it is built (from the protobuf wire format, or
while the JSON is read) and refused (413), a few bodies at a time per process (LATENCY_OTLP_DECODE_SLOTS). In
JSON, 100,000 spans are over the decoded-size cap, so the exports hold as many as fit under it. Four exports at
the per-request cap, sent at once, are stored whole within the same bound. The real uvicorn process, its peak
read from /proc (VmHWM, reset before the exports), real HTTP exports."""

from __future__ import annotations

import gzip
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from probes.models import Observation
from probes.realusers.otlp import JSON, PROTOBUF, serialize
from tests.realusers_otlp.conftest import CONTENT_TYPES, genai_spans

MB = 1 << 20
BOUND = 100 * MB
CAP = 10_000  # LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST's default


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _peak_growth(site, send) -> tuple[int, list]:
    """What `send` raised the process's peak resident memory by, in bytes, and what it returned."""
    pid = site.popen.pid
    # 5 resets the peak (VmHWM) to the present resident size.
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    before = _status_kb(pid, "VmHWM")
    answers = send()
    return (_status_kb(pid, "VmHWM") - before) * 1024, answers


def _gzipped(spans: int, encoding: str) -> bytes:
    return gzip.compress(serialize(genai_spans(spans), encoding))


# The four bodies queue for the decode slots; on a busy machine a body can wait longer than the default 10 s for
# one and be answered 503, which is the receiver shedding load, not what this test is about.
@pytest.mark.asgi_env(LATENCY_OTLP_DECODE_WAIT_SECONDS="120")
@pytest.mark.parametrize(("encoding", "huge"), [(PROTOBUF, 100_000), (JSON, 75_000)])
def test_four_huge_exports_at_once_stay_within_100_mb(site, source, post, settings, encoding, huge):
    assert settings.LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST == CAP

    def at_once(body: bytes) -> list:
        headers = {"Content-Encoding": "gzip"}
        with ThreadPoolExecutor(4) as pool:
            futures = [
                pool.submit(post, site, "traces", body, token=source.token, content_type=CONTENT_TYPES[encoding],
                            **headers)
                for _ in range(4)
            ]  # fmt: skip
            return [f.result().status_code for f in futures]

    body = _gzipped(huge, encoding)
    assert len(body) < settings.LATENCY_OTLP_MAX_BODY_BYTES
    assert at_once(_gzipped(10, encoding)) == [200] * 4  # warm: imports, connections, the city database

    growth, answers = _peak_growth(site, lambda: at_once(body))
    assert answers == [413] * 4
    assert growth <= BOUND, f"peak resident memory grew by {growth / MB:.0f} MB"
    assert Observation.objects.count() == 40

    growth, answers = _peak_growth(site, lambda: at_once(_gzipped(CAP, encoding)))
    assert answers == [200] * 4
    assert growth <= BOUND, f"peak resident memory grew by {growth / MB:.0f} MB"
    assert Observation.objects.count() == 40 + 4 * CAP
