"""deploy/*.service read the way systemd reads them, far enough to run their commands here as plain
processes: sections and keys (line continuations, comments), the %i specifier of templates, Environment=
and EnvironmentFile= (files under /etc/latency-atlas/ are read from their examples in deploy/), and
ExecStart= split into argv with the install paths mapped onto this checkout and its venv.

A unit using something this reader does not know (another specifier, an ExecStart prefix such as `-`
or `+`, an environment file without an example) makes it raise: the tests would otherwise run a
command that differs from the one systemd runs."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import ROOT

DEPLOY = ROOT / "deploy"
INSTALL_DIR = "/opt/latency-atlas"
VENV_BIN = f"{INSTALL_DIR}/.venv/bin/"
ETC_DIR = "/etc/latency-atlas/"
# What systemd gives every service before its own settings (systemd.exec(5), "Environment variables").
SYSTEMD_BASE_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "LANG": "C.UTF-8"}


class UnitError(ValueError):
    pass


@dataclass
class Unit:
    path: Path
    instance: str | None
    sections: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def is_template(self) -> bool:
        return self.path.stem.endswith("@")

    def values(self, section: str, key: str) -> list[str]:
        return [value for k, value in self.sections.get(section, []) if k == key]

    def value(self, section: str, key: str) -> str | None:
        found = self.values(section, key)
        return found[-1] if found else None

    @property
    def oneshot(self) -> bool:
        return self.value("Service", "Type") == "oneshot"

    def commands(self) -> list[list[str]]:
        """Each ExecStart= as the argv to run here."""
        return [exec_argv(line) for line in self.values("Service", "ExecStart")]

    def environment(self) -> tuple[dict[str, str], dict[str, str]]:
        """The variables systemd would set, and where each came from ("unit" or an example file's name).
        Files override Environment= and are read in order, later ones winning (systemd.exec(5))."""
        env: dict[str, str] = {}
        source: dict[str, str] = {}
        for line in self.values("Service", "Environment"):
            for word in shlex.split(line):
                key, sep, value = word.partition("=")
                if not sep:
                    raise UnitError(f"{self.name}: Environment={line!r} is not KEY=VALUE")
                env[key], source[key] = value, "unit"
        for spec in self.values("Service", "EnvironmentFile"):
            optional = spec.startswith("-")
            example = example_of(spec.lstrip("-"))
            if not example.exists():
                if optional:
                    continue
                raise UnitError(f"{self.name}: EnvironmentFile={spec} has no example {example.relative_to(ROOT)}")
            for key, value in read_env_file(example).items():
                env[key], source[key] = value, example.name
        return env, source


def example_of(path: str) -> Path:
    if not path.startswith(ETC_DIR):
        raise UnitError(f"environment file {path} is not under {ETC_DIR}")
    return DEPLOY / (path[len(ETC_DIR) :] + ".example")


def read_unit(path: Path, instance: str | None = None) -> Unit:
    unit = Unit(path=path, instance=instance)
    if unit.is_template and not instance:
        raise UnitError(f"{path.name} is a template: give an instance")
    section = None
    pending = ""
    for raw in path.read_text().splitlines():
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            unit.sections.setdefault(section, [])
            continue
        key, sep, value = line.partition("=")
        if section is None or not sep:
            raise UnitError(f"{path.name}: cannot read {raw!r}")
        unit.sections[section].append((key.strip(), _specifiers(value.strip(), instance, path.name)))
    return unit


def _specifiers(value: str, instance: str | None, name: str) -> str:
    out = []
    i = 0
    while i < len(value):
        char = value[i]
        if char != "%":
            out.append(char)
            i += 1
            continue
        spec = value[i + 1 : i + 2]
        if spec == "%":
            out.append("%")
        elif spec == "i" and instance:
            out.append(instance)
        else:
            raise UnitError(f"{name}: specifier %{spec} is not supported by tests/deploy/units.py")
        i += 2
    return "".join(out)


def exec_argv(line: str) -> list[str]:
    if line[:1] in "-@:+!":
        raise UnitError(f"ExecStart prefix {line[0]!r} is not supported by tests/deploy/units.py")
    argv = shlex.split(line)
    if not argv[0].startswith(VENV_BIN):
        raise UnitError(f"ExecStart runs {argv[0]}, not a program of {VENV_BIN}")
    local = Path(sys.executable).with_name(argv[0][len(VENV_BIN) :])
    return [str(local), *argv[1:]]


def read_env_file(path: Path) -> dict[str, str]:
    """systemd's EnvironmentFile= format: KEY=VALUE lines, # or ; comments, optional quotes."""
    env = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip().isidentifier():
            raise UnitError(f"{path.name}: {raw!r} is not VARIABLE=value")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        env[key.strip()] = value
    return env


def service_files() -> list[Path]:
    return sorted(DEPLOY.glob("*.service"))


def manage_command(argv: list[str]) -> tuple[str, list[str]] | None:
    """(subcommand, its arguments) when argv runs manage.py, else None."""
    if len(argv) >= 3 and argv[1] == "manage.py":
        return argv[2], argv[3:]
    return None
