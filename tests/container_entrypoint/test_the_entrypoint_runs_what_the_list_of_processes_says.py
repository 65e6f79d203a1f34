"""The central image's entrypoint (deploy/container/entrypoint.py) takes its commands from deploy/processes.toml as
it stands: each long-running central role becomes its one command (extra arguments added), migrate runs its
commands in order, --prepare the build's, and a role of another image or none is refused naming the roles."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib

import pytest

from tests.support import ROOT

SCRIPT = ROOT / "deploy" / "container" / "entrypoint.py"
PROCESSES = tomllib.loads((ROOT / "deploy" / "processes.toml").read_text())
CENTRAL = sorted(name for name, spec in PROCESSES.items() if spec["image"] == "central")


def entrypoint():
    spec = importlib.util.spec_from_file_location("container_entrypoint", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("role", [name for name in CENTRAL if not PROCESSES[name].get("once")])
def test_a_long_running_role_becomes_its_one_command_with_the_arguments_given(role):
    replace, steps = entrypoint().plan([role, "--extra", "1"], PROCESSES)
    (command,) = PROCESSES[role]["commands"]
    assert replace
    assert steps == [[*command, "--extra", "1"]]


def test_migrate_runs_its_commands_in_order_and_takes_no_arguments():
    module = entrypoint()
    replace, steps = module.plan(["migrate"], PROCESSES)
    assert not replace
    assert steps == PROCESSES["migrate"]["commands"]
    with pytest.raises(module.EntrypointError, match="takes no arguments"):
        module.plan(["migrate", "--fake"], PROCESSES)


def test_prepare_runs_every_roles_build_time_commands():
    _, steps = entrypoint().plan(["--prepare"], PROCESSES)
    assert steps == [command for name in CENTRAL for command in PROCESSES[name].get("prepare", [])]
    assert ["python", "manage.py", "collectstatic", "--noinput"] in steps


@pytest.mark.parametrize("argv", [["worker"], ["bogus"], []])
def test_a_role_of_another_image_or_none_is_refused_naming_the_roles(argv):
    done = subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert f"give one of {', '.join(CENTRAL)} (deploy/processes.toml)" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_failed_step_ends_the_run_with_its_status_and_the_steps_after_it_do_not_run(tmp_path, capfd):
    marker = tmp_path / "ran"
    once = {
        "image": "central",
        "once": True,
        "commands": [
            [sys.executable, "-c", "import sys; sys.exit(3)"],
            [sys.executable, "-c", f"open({str(marker)!r}, 'w')"],
        ],
    }
    assert entrypoint().run(["setup"], {"setup": once}) == 3
    assert not marker.exists()
    assert "exited with status 3" in capfd.readouterr().err
