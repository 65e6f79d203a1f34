"""The units in deploy/ run each process of deploy/processes.toml: ExecStart the list's commands with the venv's bin/
before them (the set-up unit its `prepare` commands too), only variables the process reads, a stop timeout of at
least its stop_seconds, the web on the list's port, a region worker's region from its instance name, the central
units after the set-up unit; and a unit altered out of line with the list is caught."""

from __future__ import annotations

import pytest

from tests.deploy.drift import unit_problems
from tests.deploy.manifests import processes
from tests.deploy.units import DEPLOY, VENV_BIN, read_unit, service_files

PROCS = processes()
INSTANCE = "af-lagos"


def test_the_units_run_every_process_of_the_list_as_the_list_says():
    units = [read_unit(path, INSTANCE) for path in service_files()]
    assert unit_problems(units, PROCS, VENV_BIN) == []


ALTERED = {
    "an option added to the web": (
        "latency-web.service",
        "--timeout-graceful-shutdown 10",
        "--timeout-graceful-shutdown 10 --workers 2",
        "no unit in deploy/ runs web's commands",
    ),
    "the region back on the command line": (
        "latency-region@.service",
        "worker --concurrency",
        "worker --region %i --concurrency",
        "no unit in deploy/ runs worker's commands",
    ),
    "the region no longer from the instance": (
        "latency-region@.service",
        "Environment=LATENCY_REGION=%i",
        "Environment=LATENCY_REGION=af-lagos,eu-london",
        "does not take its region from its instance name",
    ),
    "a shorter stop": ("latency-region@.service", "TimeoutStopSec=30", "TimeoutStopSec=5", "gives SIGTERM 5 s"),
    "a setting the ingest worker does not read": (
        "latency-ingest.service",
        "Environment=PYTHONUNBUFFERED=1",
        "Environment=PYTHONUNBUFFERED=1 ALLOWED_HOSTS=atlas.example.org",
        "sets ALLOWED_HOSTS, which ingest does not read",
    ),
    "the web on another port": (
        "latency-web.service",
        "UVICORN_PORT=8000",
        "UVICORN_PORT=8001",
        "does not listen on the list's port 8000",
    ),
    "collectstatic dropped from the set-up": (
        "latency-migrate.service",
        "ExecStart=/opt/latency-atlas/.venv/bin/python manage.py collectstatic --noinput\n",
        "",
        "no unit in deploy/ runs migrate's commands",
    ),
    "the scheduler not after the set-up": (
        "latency-scheduler.service",
        " latency-migrate.service",
        "",
        "latency-scheduler.service does not start after latency-migrate.service",
    ),
}


@pytest.mark.parametrize("altered", ALTERED)
def test_an_altered_unit_is_caught(altered, tmp_path):
    name, old, new, expected = ALTERED[altered]
    units = []
    for original in service_files():
        path = original
        if original.name == name:
            text = original.read_text()
            assert old in text
            path = tmp_path / name
            path.write_text(text.replace(old, new))
        units.append(read_unit(path, INSTANCE))
    problems = unit_problems(units, PROCS, VENV_BIN)
    assert any(expected in problem for problem in problems), problems
    assert DEPLOY.joinpath(name).read_text() != (tmp_path / name).read_text()
