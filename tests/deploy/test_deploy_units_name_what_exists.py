"""The units in deploy/ name only commands, options, settings and directives that exist: a typo in a unit
file would otherwise surface only on a server, as a unit that fails to start or a variable silently
ignored."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, get_commands, load_command_class

from probes.conf.catalog import CENTRAL, SETTINGS, WORKER
from tests.deploy.units import DEPLOY, manage_command, read_env_file, read_unit, service_files
from tests.support import ROOT

INSTANCE = "af-lagos"
UNITS = [read_unit(path, INSTANCE) for path in service_files()]
LONG_RUNNING = [u for u in UNITS if not u.oneshot]
REGION_UNIT = next(u for u in UNITS if u.name == "latency-region@.service")


def _id(unit) -> str:
    return unit.name


def manage_commands():
    return [(unit.name, found) for unit in UNITS for argv in unit.commands() if (found := manage_command(argv))]


def command_parser(name: str):
    return load_command_class(get_commands()[name], name).create_parser("manage.py", name)


@pytest.mark.parametrize(("unit", "command"), manage_commands(), ids=lambda v: v if isinstance(v, str) else v[0])
def test_every_manage_py_command_of_a_unit_exists_and_takes_its_options(unit, command):
    name, args = command
    done = subprocess.run(
        [sys.executable, "manage.py", "help", name], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # The command's own parser, as `manage.py` builds it: an unknown option or a bad value raises.
    command_parser(name).parse_args(args)


def console_script_runs():
    return [(unit.name, argv) for unit in UNITS for argv in unit.commands() if argv[0].endswith("/latency-atlas")]


def test_the_region_unit_runs_the_console_script_and_it_takes_the_units_options():
    from probes.worker.cli import build_parser

    runs = console_script_runs()
    assert [name for name, _ in runs] == ["latency-region@.service"]
    for _, argv in runs:
        assert Path(argv[0]).exists(), f"{argv[0]} is not installed (pyproject.toml [project.scripts])"
        opts = build_parser().parse_args(argv[1:])
        # The region comes from the instance name through the environment, as a container's LATENCY_REGION.
        assert opts.command == "worker" and opts.region is None
    env, source = REGION_UNIT.environment()
    assert (env["LATENCY_REGION"], source["LATENCY_REGION"]) == (INSTANCE, "unit")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["worker", "--region", INSTANCE, "--concurency", "5"])


def test_a_region_worker_refused_for_its_configuration_is_not_restarted():
    from probes.worker.config import EX_CONFIG

    assert REGION_UNIT.value("Service", "RestartPreventExitStatus") == str(EX_CONFIG)


def test_a_misspelt_option_is_refused_by_that_check():
    with pytest.raises(CommandError, match="unrecognized arguments"):
        command_parser("region_worker").parse_args(["--region", INSTANCE, "--concurency", "5"])


def test_every_uvicorn_option_of_a_unit_exists():
    import click
    from uvicorn.main import main

    runs = [argv for unit in UNITS for argv in unit.commands() if argv[0].endswith("/uvicorn")]
    assert runs, "no unit runs the web server"
    for argv in runs:
        main.make_context("uvicorn", argv[1:])  # raises click.UsageError on an unknown option
    with pytest.raises(click.UsageError):
        main.make_context("uvicorn", ["latency.asgi:application", "--no-proxy-header"])


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_every_unit_and_directive(tmp_path):
    """`systemd-analyze verify` on copies whose programs are this checkout's venv: it reports unknown
    directives and bad values on stderr (with status 0 for some), so stderr must be empty."""
    venv_bin = f"{Path(sys.executable).parent}/"
    names = []
    for path in [*service_files(), DEPLOY / "latency.target"]:
        text = path.read_text().replace("/opt/latency-atlas/.venv/bin/", venv_bin)
        name = path.name.replace("@.", f"@{INSTANCE}.")
        (tmp_path / name).write_text(text)
        names.append(str(tmp_path / name))
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *names], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr


@pytest.mark.parametrize("unit", UNITS, ids=_id)
def test_every_unit_runs_as_its_own_user_in_a_hardened_sandbox(unit):
    service = dict(unit.sections["Service"])
    assert service["User"] == "latency"
    assert service["NoNewPrivileges"] == "yes"
    assert service["ProtectSystem"] == "strict"
    assert service["PrivateTmp"] == "yes"
    assert service["CapabilityBoundingSet"] == ""


@pytest.mark.parametrize("unit", LONG_RUNNING, ids=_id)
def test_every_long_running_unit_is_restarted_on_failure_and_grouped_under_latency_target(unit):
    assert unit.value("Service", "Restart") == "on-failure"
    assert unit.value("Unit", "PartOf") == "latency.target"
    assert unit.value("Install", "WantedBy") == "latency.target"


def test_region_workers_are_given_no_database_credentials_or_secret_key():
    env, _ = REGION_UNIT.environment()
    assert not any(spec.endswith("/latency.env") for spec in REGION_UNIT.values("Service", "EnvironmentFile"))
    assert "DATABASE_URL" not in env
    assert "SECRET_KEY" not in env
    assert {"LATENCY_BROKER_URL", "LATENCY_REGION_KEY"} <= set(env)


def test_the_region_environment_shows_a_tls_broker_for_redis_and_for_rabbitmq():
    text = (DEPLOY / "region.env.example").read_text()
    assert read_env_file(DEPLOY / "region.env.example")["LATENCY_BROKER_URL"].startswith("rediss://")
    assert re.search(r"^#LATENCY_BROKER_URL=amqps://", text, re.MULTILINE)
    assert re.search(r"^#?LATENCY_BROKER_CA=", text, re.MULTILINE)


def settings_variables() -> set[str]:
    """What the central processes read: the one list of settings (tests/settings_catalog holds the list and the
    code to each other both ways)."""
    return {entry.name for entry in SETTINGS if set(entry.readers) & set(CENTRAL)}


def worker_variables() -> set[str]:
    """What a region worker reads (probes/worker/config.py, and its engine's rules for targets:
    probes/engine/envpolicy.py), without Django's settings; LATENCY_REGION_KEY_<SLUG> by one slug's name."""
    return {entry.name + ("AF_LAGOS" if entry.prefix else "") for entry in SETTINGS if WORKER in entry.readers}


def test_the_example_environment_names_only_variables_the_settings_read():
    """Commented-out lines count too: they are the optional settings an operator uncomments."""
    example = DEPLOY / "latency.env.example"
    named = set(read_env_file(example))
    named |= set(re.findall(r"^#([A-Z][A-Z0-9_]*)=", example.read_text(), re.MULTILINE))
    assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "ALLOWED_HOSTS", "LATENCY_PRODUCTION"} <= named
    assert named - settings_variables() == set()
    region_example = DEPLOY / "region.env.example"
    region_named = set(read_env_file(region_example))
    region_named |= set(re.findall(r"^#([A-Z][A-Z0-9_]*)=", region_example.read_text(), re.MULTILINE))
    provider_keys = {name for name in region_named if name.endswith("_API_KEY")}
    assert region_named - provider_keys - worker_variables() == set()


def test_the_example_secret_key_is_left_empty_so_production_refuses_to_start_until_it_is_set():
    assert read_env_file(DEPLOY / "latency.env.example")["SECRET_KEY"] == ""
