"""`manage.py probe --style responses` makes one Responses API call and
reports its phases and usage; the style needs a model, like openai."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository


def probe(*args):
    return subprocess.run(
        [sys.executable, "manage.py", "probe", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ,
    )


def test_probe_style_responses_is_ok_with_usage(mockllm, probe_url):
    url = probe_url(mockllm, "responses", tokens=5, reasoning_tokens=2, gap_ms=2)
    out = probe(url, "--style", "responses", "--model", "m", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["outcome"] == "ok" and (data["output_tokens"], data["tokens_estimated"]) == (7, False)
    # The reasoning tokens come first; on a busy machine both may be read in one go, so at the same instant.
    assert data["ttfat_ms"] is not None and data["ttft_ms"] <= data["ttfat_ms"]


def test_probe_style_responses_requires_a_model():
    out = probe("http://127.0.0.1:1/v1/responses", "--style", "responses")
    assert out.returncode == 2 and "--model is required" in out.stderr
