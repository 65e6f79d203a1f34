"""A wheelhouse for a region host, made without the network: the checkout's own wheel, and a wheel of every
distribution it needs on a region host, repacked from the environment this runs in (which installed them).

`pip install --no-index --find-links <wheelhouse> latency-atlas[worker]` then installs a region worker exactly as
from the package index, with the versions this environment runs, and reaches no index (tests/regions_e2e).

Why repacked rather than downloaded: pip keeps what it downloads in an HTTP cache that it reads only when it can
ask the index, so nothing downloaded earlier can be installed offline; an installed distribution's RECORD names
every file it put in site-packages, which is all a wheel of it needs. Files installed outside site-packages (console
scripts: pip writes them again from entry_points.txt) are left out.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import re
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PROJECT = "latency-atlas"
# The extra a region host installs, once the project declares it; before that, the base package is what it runs.
WORKER_EXTRA = "worker"
# Written afresh in the wheel, or only meaningful in an installed environment.
_INSTALL_ONLY = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


class WheelhouseError(RuntimeError):
    pass


def build(root: Path, out: Path) -> str:
    """Fill `out` with the checkout's wheel and its region-host dependencies; returns the requirement to install
    from it (`latency-atlas[worker]` when the project has that extra, else `latency-atlas`)."""
    out.mkdir(parents=True, exist_ok=True)
    project_wheel = build_project_wheel(root, out)
    with zipfile.ZipFile(project_wheel) as zf:
        (meta_name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        text = zf.read(meta_name).decode()
    extras = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Provides-Extra:")]
    wanted = [WORKER_EXTRA] if WORKER_EXTRA in extras else []
    requires = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]
    for name in sorted(closure(requires, wanted)):
        repack(metadata.distribution(name), out)
    return PROJECT + (f"[{WORKER_EXTRA}]" if wanted else "")


def build_project_wheel(root: Path, out: Path) -> Path:
    """The checkout's wheel, built by the setuptools of this environment (no build isolation: that would fetch
    setuptools from an index)."""
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q"]
    done = subprocess.run(
        [*pip, "-w", out, root],
        capture_output=True,
        text=True,
        check=False,
    )
    wheels = list(out.glob("latency_atlas-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise WheelhouseError(f"building the checkout's wheel failed:\n{(done.stdout + done.stderr)[-4000:]}")
    return wheels[0]


def closure(requires: list[str], extras: list[str]) -> set[str]:
    """The canonical names of every distribution the requirements need, with these extras of the top one, on
    this interpreter: followed through each installed distribution's own requirements and extras."""
    seen: set[str] = set()
    pending = [(Requirement(r), extras) for r in requires]
    done_extras: dict[str, set[str]] = {}
    while pending:
        req, active = pending.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in (active or [""])):
            continue
        name = canonicalize_name(req.name)
        wanted = set(req.extras)
        if name in seen and wanted <= done_extras[name]:
            continue
        seen.add(name)
        done_extras.setdefault(name, set()).update(wanted)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError as exc:
            raise WheelhouseError(f"{req.name} is needed but not installed here: run `make install`") from exc
        pending.extend((Requirement(r), sorted(done_extras[name])) for r in dist.requires or [])
    return seen


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
