"""A region worker's installation as files, and a venv built from them with no index.

`python -m devtools.wheelhouse --dest var/wheelhouse` (`make worker-wheelhouse`) downloads the wheels of
requirements/worker.txt (checked against its hashes) and of the build backend, once: needs the package registry.
`--venv DIR` then builds a venv as a region host has it (deploy/README.md), from the wheelhouse only: the locked
worker list, then this checkout with --no-deps. Tests call `ensure_wheelhouse` and `worker_venv`.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "worker.txt"
STAMP = ".worker-lock.sha256"  # the lock the wheelhouse was downloaded for: another lock, another download
DISTRIBUTED = ("pyproject.toml", "README.md", "latency", "probes")  # what the wheel is built from
_UNBUILT = shutil.ignore_patterns("__pycache__", "*.pyc")


def _pip(python: str | Path, *args: str | Path) -> None:
    subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", *map(str, args)], check=True)


def _lock_digest() -> str:
    backend = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    return hashlib.sha256(LOCK.read_bytes() + repr(backend).encode()).hexdigest()


def ensure_wheelhouse(dest: Path) -> Path:
    """The wheelhouse for the current lock, downloaded when missing or made for another lock."""
    stamp = dest / STAMP
    if stamp.exists() and stamp.read_text() == _lock_digest():
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    _pip(sys.executable, "download", "--quiet", "--only-binary=:all:", "--require-hashes", "-r", LOCK, "-d", dest)
    # The build backend, so the checkout's own wheel can be built with --no-index.
    backend = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    _pip(sys.executable, "download", "--quiet", "--only-binary=:all:", *backend, "-d", dest)
    stamp.write_text(_lock_digest())
    return dest


def worker_venv(venv: Path, wheelhouse: Path) -> Path:
    """A venv with what a region host installs, from the wheelhouse alone. Returns its python."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    offline = ("--quiet", "--no-index", "--find-links", wheelhouse)
    _pip(python, "install", *offline, "--require-hashes", "-r", LOCK)
    with tempfile.TemporaryDirectory() as tmp:
        # Built from a copy of what the wheel holds: setuptools builds in the tree, and a build/ left there by an
        # earlier build would put modules since deleted into the wheel.
        source = Path(tmp) / "source"
        source.mkdir()
        for name in DISTRIBUTED:
            if (ROOT / name).is_dir():
                shutil.copytree(ROOT / name, source / name, ignore=_UNBUILT)
            else:
                shutil.copy2(ROOT / name, source / name)
        _pip(python, "wheel", *offline, "--no-deps", "--wheel-dir", Path(tmp) / "wheels", source)
        (wheel,) = (Path(tmp) / "wheels").glob("latency_atlas-*.whl")
        _pip(python, "install", *offline, "--no-deps", wheel)
    return python


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=ROOT / "var" / "wheelhouse")
    parser.add_argument("--venv", type=Path, help="also build a region worker's venv here from the wheelhouse")
    args = parser.parse_args(argv)
    ensure_wheelhouse(args.dest)
    if args.venv:
        worker_venv(args.venv, args.dest)


if __name__ == "__main__":
    main()
