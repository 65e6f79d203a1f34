"""`manage.py probe --workload NAME` sends that workload's prompt, and `--prompt-file PATH` a prompt too long for a
command line (400 KB here, as the mock server counts it); a file it cannot read is refused before any call."""

from __future__ import annotations

import json

from tests.engine.test_probe_command import probe


def test_a_workload_sends_its_input_tokens(mockllm, probe_url):
    out = probe(probe_url(mockllm, "openai", tokens=3), "--model", "m", "--workload", "prompt_1k", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["workload"] == "prompt_1k"
    assert 900 <= data["input_tokens"] <= 1300


def test_a_prompt_file_of_400_kb_is_sent_whole(mockllm, probe_url, tmp_path):
    prompt = tmp_path / "long.txt"
    prompt.write_text("word " * 80_000, encoding="utf-8")
    out = probe(probe_url(mockllm, "openai", tokens=3), "--model", "m", "--prompt-file", str(prompt), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    # The mock counts a token per four characters.
    assert data["input_tokens"] == -(-len(prompt.read_text()) // 4)
    assert data["request_sent_ms"] <= data["ttfb_ms"]


def test_a_prompt_file_it_cannot_read_is_refused(mockllm, probe_url, tmp_path):
    out = probe(probe_url(mockllm, "openai"), "--model", "m", "--prompt-file", str(tmp_path / "missing.txt"))
    assert out.returncode == 2
    assert "--prompt-file" in out.stderr and "missing.txt" in out.stderr
