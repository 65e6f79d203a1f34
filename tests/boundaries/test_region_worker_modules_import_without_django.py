"""Every module a region worker imports (probes.worker.*, probes.engine.*, probes.runtime.* and the compat modules of
the libraries they reach into) imports without Django and without a database driver: a region host has neither
(requirements/worker.txt). Run in a fresh interpreter where importing either fails, so a module that only works
because something else imported Django first is caught too."""

from __future__ import annotations

import subprocess
import sys

from tests.support import ROOT

WORKER_PACKAGES = ("probes/worker", "probes/engine", "probes/runtime")
WORKER_MODULES = ("probes.compat.httpcore", "probes.compat.anyio", "probes.compat.kombu")
FORBIDDEN = ("django", "psycopg", "psycopg_pool", "psycopg2", "channels", "numpy")

CHECK = """
import importlib, importlib.abc, sys
forbidden = set(sys.argv[1].split(","))
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in forbidden:
            raise ImportError(f"{name} imported (a region host does not have it)")
        return None
sys.meta_path.insert(0, Refuse())
for module in sys.argv[2:]:
    importlib.import_module(module)
print("imported", len(sys.argv) - 2)
"""


def _worker_modules() -> list[str]:
    modules = list(WORKER_MODULES)
    for package in WORKER_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return modules


def test_every_region_worker_module_imports_with_django_and_psycopg_absent():
    modules = _worker_modules()
    done = subprocess.run(
        [sys.executable, "-c", CHECK, ",".join(FORBIDDEN), *modules],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["imported", str(len(modules))]
