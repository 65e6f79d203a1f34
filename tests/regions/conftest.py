"""A region host, as far as one machine can be one: the console script
`latency-atlas` run in a subprocess with only what a region host has (PATH,
HOME, the broker URL, the region's credential), none of the site's
settings, beside the suite's real broker, database and ingest worker."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import ROOT, Proc, wait_for

BIN = Path(sys.executable).parent
SCRIPT = BIN / "latency-atlas"
CLOCK_SCRIPT = Path(__file__).with_name("clock_moved.py")


@dataclass
class RegionHost:
    pipeline: object
    tmp_path: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            "PATH": f"{BIN}:/usr/bin:/bin",
            "HOME": str(self.tmp_path),
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "LATENCY_BROKER_URL": self.pipeline.redis_url,
        }
        env.update({k: str(v) for k, v in extra.items()})
        return {k: v for k, v in env.items() if v is not None}

    def run(self, *args: str, timeout: float = 120, argv0: list[str] | None = None, **env: str):
        """The CLI to its end (a refusal): exit status and everything it printed."""
        return subprocess.run(
            [*(argv0 or [str(SCRIPT)]), *args],
            cwd=self.tmp_path,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def start(self, *args: str, **env: str) -> Proc:
        """The CLI as a long-running worker."""
        name = "-".join(a.strip("-") for a in args)[:60].replace("/", "_").replace(",", "_")
        proc = Proc(
            list(args),
            {},
            self.tmp_path / f"cli-{name}-{len(self.pipeline.procs)}.log",
            argv=[str(SCRIPT), *args],
            base_env=self.env(**env),
        )
        self.pipeline.procs.append(proc)
        return proc

    def ingest(self) -> Proc:
        """The central ingest worker (it takes heartbeats too), up and consuming."""
        proc = self.pipeline.start_ingest()
        wait_for(lambda: " ready." in proc.log(), 90, message="the ingest worker to be ready")
        return proc


@pytest.fixture
def region_host(pipeline, tmp_path) -> RegionHost:
    return RegionHost(pipeline, tmp_path)


def one_line(text: str) -> str:
    """The refusal: exactly one non-empty line."""
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


__all__ = ["CLOCK_SCRIPT", "ROOT", "RegionHost", "one_line"]
