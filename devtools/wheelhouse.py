"""A region host's installation as files (a wheelhouse), and a venv built from it with no index, as a region
host builds it: requirements/worker.txt (the worker's locked list: no Django, no database driver), then the
checkout's wheel with --no-deps (docs/guides/add-a-region.md).

Two ways to fill a wheelhouse:
- `build(dest)`, for the tests (tests/regions_e2e, tests/boundaries): no network. The checkout's wheel is built by
  this environment's setuptools, and each locked distribution is repacked from this environment, which installed
  it from the same lock (`make install`). Why repacked rather than downloaded: pip reads its HTTP cache only when
  it can ask the index, so nothing downloaded earlier installs offline; an installed distribution's RECORD names
  every file it put in site-packages, which is all a wheel of it needs (console scripts are written again by pip
  from entry_points.txt).
- `download(dest)` (`make worker-wheelhouse`), for a region host with no access to the package index: the real
  wheels of requirements/worker.txt, checked against its hashes; needs the package registry once.

`python -m devtools.wheelhouse --dest DIR [--offline] [--venv VENV]`.
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "worker.txt"
# In a wheelhouse made by build(): the lock's names and versions without its hashes (a repacked wheel is not
# the file the hash was taken of; the versions are the lock's all the same).
PINS = "worker-pins.txt"
DISTRIBUTED = ("pyproject.toml", "README.md", "latency", "probes")  # what the project's wheel is built from
_UNBUILT = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info")
# Written afresh in the wheel, or only meaningful in an installed environment.
_INSTALL_ONLY = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def _pip(python: str | Path, *args: str | Path) -> None:
    subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", *map(str, args)], check=True)


def locked(lock: Path = LOCK) -> dict[str, str]:
    """The lock's distributions this interpreter needs (their markers evaluated): canonical name -> version."""
    pins = {}
    for line in lock.read_text().splitlines():
        text = line.split(" \\")[0].strip()
        if not text or text.startswith(("#", "-")):
            continue
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        (spec,) = requirement.specifier
        pins[canonicalize_name(requirement.name)] = spec.version
    return pins


def build(dest: Path, root: Path = ROOT) -> Path:
    """Fill `dest` with the checkout's wheel and a wheel of every distribution of the worker's lock, without the
    network (see the module's docstring). Returns dest."""
    dest.mkdir(parents=True, exist_ok=True)
    build_project_wheel(root, dest)
    pins = locked()
    for name, version in sorted(pins.items()):
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError as exc:
            raise WheelhouseError(f"{name} (in requirements/worker.txt) is not installed: run `make install`") from exc
        if dist.version != version:
            raise WheelhouseError(
                f"{name} {dist.version} is installed but requirements/worker.txt locks {version}: run `make install`"
            )
        repack(dist, dest)
    (dest / PINS).write_text("".join(f"{name}=={version}\n" for name, version in sorted(pins.items())))
    return dest


def download(dest: Path) -> Path:
    """Fill `dest` with the real wheels of the worker's lock (hash-checked) and the checkout's wheel."""
    dest.mkdir(parents=True, exist_ok=True)
    _pip(sys.executable, "download", "--quiet", "--only-binary=:all:", "--require-hashes", "-r", LOCK, "-d", dest)
    build_project_wheel(ROOT, dest)
    return dest


def worker_venv(venv: Path, wheelhouse: Path) -> Path:
    """A venv with what a region host installs, from the wheelhouse alone. Returns its python."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # --no-compile: byte-compiling every module of every package costs as much as the rest of the install, for
    # the few modules a worker imports (compiled on their first import).
    offline = ("--quiet", "--no-index", "--no-compile", "--find-links", wheelhouse)
    if (wheelhouse / PINS).exists():
        _pip(python, "install", *offline, "-r", wheelhouse / PINS)
    else:
        _pip(python, "install", *offline, "--require-hashes", "-r", LOCK)
    (wheel,) = wheelhouse.glob("latency_atlas-*.whl")
    _pip(python, "install", *offline, "--no-deps", wheel)
    return python


class WheelhouseError(RuntimeError):
    pass


def build_project_wheel(root: Path, out: Path) -> Path:
    """The checkout's wheel, built by the setuptools of this environment (no build isolation: that would fetch
    setuptools from an index), from a copy of what the wheel holds: setuptools builds in the tree, and a build/
    left there by an earlier build would put modules since deleted into the wheel."""
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q"]
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source"
        source.mkdir()
        for name in DISTRIBUTED:
            if (root / name).is_dir():
                shutil.copytree(root / name, source / name, ignore=_UNBUILT)
            else:
                shutil.copy2(root / name, source / name)
        done = subprocess.run([*pip, "-w", out, source], capture_output=True, text=True, check=False)
    wheels = list(out.glob("latency_atlas-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise WheelhouseError(f"building the checkout's wheel failed:\n{(done.stdout + done.stderr)[-4000:]}")
    return wheels[0]


def _tag(dist: metadata.Distribution) -> str:
    text = dist.read_text("WHEEL")
    if text is None:
        raise WheelhouseError(f"{dist.metadata['Name']} was not installed from a wheel: it cannot be repacked")
    tags = [line.split(":", 1)[1].strip().split("-") for line in text.splitlines() if line.startswith("Tag:")]
    # A wheel's name carries its tags compressed: each part's values joined with dots.
    return "-".join(".".join(dict.fromkeys(t[i] for t in tags)) for i in range(3))


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def repack(dist: metadata.Distribution, out: Path) -> Path:
    """A wheel of an installed distribution, from the files its RECORD lists inside site-packages."""
    name = re.sub(r"[^\w\d.]+", "_", dist.metadata["Name"])
    path = out / f"{name}-{dist.version}-{_tag(dist)}.whl"
    records: list[tuple[str, str, str]] = []
    info_dir = None
    # Stored, not deflated: the wheelhouse lives for one test session, and compressing numpy's and
    # cryptography's libraries costs more time than it saves.
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for file in dist.files or []:
            arcname = file.as_posix()
            if arcname.startswith("../") or "__pycache__" in file.parts:
                continue
            if file.parts[0].endswith(".dist-info"):
                info_dir = file.parts[0]
                if file.name in _INSTALL_ONLY:
                    continue
            source = Path(str(dist.locate_file(file)))
            if not source.is_file():
                continue
            data = source.read_bytes()
            zf.writestr(arcname, data)
            records.append((arcname, _digest(data), str(len(data))))
        if info_dir is None:
            raise WheelhouseError(f"{dist.metadata['Name']} lists no .dist-info in its RECORD")
        record = io.StringIO()
        writer = csv.writer(record, lineterminator="\n")
        writer.writerows(records)
        writer.writerow((f"{info_dir}/RECORD", "", ""))
        zf.writestr(f"{info_dir}/RECORD", record.getvalue())
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=ROOT / "var" / "wheelhouse")
    parser.add_argument("--offline", action="store_true", help="repack from this environment instead of downloading")
    parser.add_argument("--venv", type=Path, help="also build a region worker's venv here from the wheelhouse")
    args = parser.parse_args(argv)
    (build if args.offline else download)(args.dest)
    if args.venv:
        worker_venv(args.venv, args.dest)


if __name__ == "__main__":
    main()
