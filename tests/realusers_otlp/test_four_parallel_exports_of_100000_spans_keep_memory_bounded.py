"""Four exports of 100,000 GenAI spans each, sent at once (gzip, under both body caps), raise the web process's
peak resident memory by at most 100 MB: each is counted from its wire format and refused (413) before a span is
built, a few bodies at a time per process (LATENCY_OTLP_DECODE_SLOTS). Four exports at the per-request cap, sent
at once, are stored whole within the same bound. The real uvicorn process, its peak read from /proc (VmHWM, reset
before the exports), real HTTP exports."""

from __future__ import annotations

import gzip
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from probes.models import Observation
from tests.realusers_otlp.conftest import genai_spans

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


def _at_once(site, post, token: str, body: bytes) -> list:
    with ThreadPoolExecutor(4) as pool:
        futures = [
            pool.submit(post, site, "traces", body, token=token, **{"Content-Encoding": "gzip"}) for _ in range(4)
        ]
        return [f.result().status_code for f in futures]


def test_four_huge_exports_at_once_stay_within_100_mb(site, source, post, settings):
    assert settings.LATENCY_OTLP_MAX_SPANS_AND_POINTS_PER_REQUEST == CAP
    huge = gzip.compress(genai_spans(100_000).SerializeToString())
    assert len(huge) < settings.LATENCY_OTLP_MAX_BODY_BYTES
    warm = post(site, "traces", gzip.compress(genai_spans(10).SerializeToString()), token=source.token,
                **{"Content-Encoding": "gzip"})  # fmt: skip
    assert warm.status_code == 200

    growth, answers = _peak_growth(site, lambda: _at_once(site, post, source.token, huge))
    assert answers == [413] * 4
    assert growth <= BOUND, f"peak resident memory grew by {growth / MB:.0f} MB"
    assert Observation.objects.count() == 10

    at_cap = gzip.compress(genai_spans(CAP).SerializeToString())
    growth, answers = _peak_growth(site, lambda: _at_once(site, post, source.token, at_cap))
    assert answers == [200] * 4
    assert growth <= BOUND, f"peak resident memory grew by {growth / MB:.0f} MB"
    assert Observation.objects.count() == 10 + 4 * CAP
