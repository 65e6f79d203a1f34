"""deploy/compose.yaml runs each process of deploy/processes.toml with its command, the variables it reads (and
every one it requires), its secrets as files, its stop timeout and its health check, the one-shot migrate before
the rest (tests/deploy/drift.py); and each alteration of the file, or of the list, that breaks one of those is
caught. Its set-up services hand the workers their credentials where the workers look for them."""

from __future__ import annotations

import copy
import dataclasses
import importlib

import pytest

from tests.deploy.drift import compose_problems, env_problems
from tests.deploy.manifests import Process, compose, environment_of, processes

PROCS = processes()
DOC = compose()
SERVICES = DOC["services"]


def _seeded_regions() -> list[str]:
    return list(importlib.import_module("probes.migrations.0002_seed_regions").SLUGS)


def test_the_compose_file_runs_every_process_of_the_list_as_the_list_says():
    assert compose_problems(DOC, PROCS) == []


def test_defaults_taken_from_the_shell_still_give_what_the_list_says():
    """Compose's ${NAME:-default} values from an operator's shell or deploy/.env."""
    environ = {"LATENCY_REGION": "af-lagos", "ALLOWED_HOSTS": "atlas.example.org", "ATLAS_TAG": "0.2.0"}
    assert compose_problems(compose(environ=environ), PROCS) == []


def _set(service: str, key: str, value) -> dict:
    doc = copy.deepcopy(DOC)
    doc["services"][service][key] = value
    return doc


def _env(service: str, **changes) -> dict:
    doc = copy.deepcopy(DOC)
    env = environment_of(doc["services"][service])
    for key, value in changes.items():
        if value is None:
            env.pop(key)
        else:
            env[key] = value
    doc["services"][service]["environment"] = env
    return doc


def _without_dependency(service: str, on: str) -> dict:
    doc = copy.deepcopy(DOC)
    del doc["services"][service]["depends_on"][on]
    return doc


def _healthcheck(service: str, old: str, new: str) -> dict:
    doc = copy.deepcopy(DOC)
    test = doc["services"][service]["healthcheck"]["test"]
    doc["services"][service]["healthcheck"]["test"] = [word.replace(old, new) for word in test]
    return doc


ALTERED = {
    "a web option added": (
        _set("web", "command", ["web", "--reload"]),
        "compose service web passes ['web', '--reload'] to the entrypoint, not ['web']",
    ),
    "the worker's concurrency changed": (
        _set("worker", "command", ["--concurrency", "5", "--loglevel", "INFO"]),
        "compose service worker runs ['--concurrency', '5', '--loglevel', 'INFO']: not in the list",
    ),
    "a site setting given to the ingest worker": (
        _env("ingest", ALLOWED_HOSTS="atlas.example.org"),
        "sets ALLOWED_HOSTS, which ingest does not read",
    ),
    "a misspelt setting": (_env("web", LATENCY_PUBLIC_DASHBOAD="true"), "sets LATENCY_PUBLIC_DASHBOAD"),
    "a required setting left out": (_env("web", ALLOWED_HOSTS=None), "does not set ALLOWED_HOSTS"),
    "the worker's credential left out": (
        _env("worker", LATENCY_REGION_KEY_FILE=None),
        "does not set LATENCY_REGION_KEY",
    ),
    "a secret given as a value": (
        _env("scheduler", SECRET_KEY_FILE=None, SECRET_KEY="x" * 50),
        "gives the secret SECRET_KEY as a value",
    ),
    "a broker URL with a password in it": (
        _env("worker", LATENCY_BROKER_URL="redis://:hunter2@redis:6379/0"),
        "gives the secret LATENCY_BROKER_URL as a value",
    ),
    "a shorter stop": (_set("worker", "stop_grace_period", "5s"), "gives SIGTERM 5 s, less than worker's 10 s"),
    "the default stop for the web": (
        {
            **DOC,
            "services": {**SERVICES, "web": {k: v for k, v in SERVICES["web"].items() if k != "stop_grace_period"}},
        },
        "gives SIGTERM 10 s, less than web's 30 s",
    ),
    "liveness asked for readiness": (
        _healthcheck("scheduler", "/readyz", "/healthz"),
        "healthcheck does not ask /readyz",
    ),
    "the health port moved without the check": (
        _env("ingest", LATENCY_HEALTH_PORT="9000"),
        "does not ask /readyz on port 9000",
    ),
    "the web on another port": (_env("web", UVICORN_PORT="8080"), "does not listen on the list's port 8000"),
    "no health port": (_env("worker", LATENCY_HEALTH_PORT=None), "does not set LATENCY_HEALTH_PORT"),
    "the ingest worker not waiting for migrate": (
        _without_dependency("ingest", "migrate"),
        "compose service ingest does not wait for migrate",
    ),
    "migrate restarted": (_set("migrate", "restart", "on-failure"), "runs once but restarts"),
    "a writable root": (_set("web", "read_only", False), "compose service web is not read-only"),
    "capabilities kept": (_set("ingest", "cap_drop", []), "keeps capabilities"),
}


@pytest.mark.parametrize("altered", ALTERED)
def test_an_altered_compose_file_is_caught(altered):
    doc, expected = ALTERED[altered]
    problems = compose_problems(doc, PROCS)
    assert any(expected in problem for problem in problems), problems


LIST_ALTERED = {
    "a longer stop": (dataclasses.replace(PROCS["web"], stop_seconds=60), "gives SIGTERM 30 s, less than web's 60 s"),
    "a new option": (
        dataclasses.replace(PROCS["worker"], commands=[[*PROCS["worker"].commands[0], "--hello-timeout", "30"]]),
        "no compose service runs worker",
    ),
    "a variable no longer allowed": (
        # LATENCY_HEALTH_PORT is read by the workers (the catalogue's ingest, scheduler and worker), not the web.
        dataclasses.replace(PROCS["ingest"], reads="site", env=()),
        "sets LATENCY_HEALTH_PORT, which ingest does not read",
    ),
}


@pytest.mark.parametrize("altered", LIST_ALTERED)
def test_the_compose_file_is_caught_when_the_list_changes_without_it(altered):
    proc, expected = LIST_ALTERED[altered]
    problems = compose_problems(DOC, {**PROCS, proc.name: proc})
    assert any(expected in problem for problem in problems), problems


def test_the_set_up_services_read_only_the_sites_settings_and_no_secret_as_a_value():
    # region-key and demo-setup run manage.py commands: they read what the web process reads.
    site = Process("site settings", "central", "site", [])
    for name in ("migrate", "region-key", "demo-setup"):
        assert env_problems(f"compose service {name}", site, environment_of(SERVICES[name])) == []
    assert "environment" not in SERVICES["init-secrets"]


def _option(argv: list[str], option: str) -> str:
    return argv[argv.index(option) + 1]


def test_the_region_worker_reads_its_credential_where_region_key_writes_it():
    worker = environment_of(SERVICES["worker"])
    region_key = SERVICES["region-key"]
    assert region_key["command"][0] == worker["LATENCY_REGION"]
    assert _option(region_key["command"], "--output") == worker["LATENCY_REGION_KEY_FILE"]
    assert "--keep" in region_key["command"]
    assert SERVICES["worker"]["depends_on"]["region-key"]["condition"] == "service_completed_successfully"
    # The worker mounts the keys alone: no database URL, no SECRET_KEY.
    assert [v.split(":")[0] for v in SERVICES["worker"]["volumes"]] == ["region-keys"]


def test_the_demo_worker_serves_every_seeded_region_with_the_credential_demo_setup_writes():
    env = environment_of(SERVICES["demo-worker"])
    regions = env["LATENCY_REGION"].split(",")
    assert regions == _seeded_regions()
    keys = _option(SERVICES["demo-setup"]["entrypoint"], "--keys")
    from probes.worker.config import key_variable

    for slug in regions:
        assert env[key_variable(slug) + "_FILE"] == f"{keys}/{slug}"
    assert SERVICES["demo-worker"]["profiles"] == ["demo"]
    assert SERVICES["demo-setup"]["profiles"] == ["demo"]
    mock = _option(SERVICES["demo-setup"]["entrypoint"], "--mock-url")
    assert mock == f"http://mockllm:{_option(SERVICES['mockllm']['entrypoint'], '--port')}"


def test_the_scheduler_starts_after_the_demos_history_only_when_the_demo_runs():
    dependency = SERVICES["scheduler"]["depends_on"]["demo-setup"]
    assert dependency == {"condition": "service_completed_successfully", "required": False}
    assert "profiles" not in SERVICES["scheduler"]
