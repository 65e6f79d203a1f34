#!/usr/bin/env python3
"""The central image's entrypoint (Containerfile): `entrypoint.py ROLE [ARGS...]`, ROLE one of the central
processes of deploy/processes.toml (web, ingest, scheduler, migrate), read here at every start so the image runs
what systemd, compose and Kubernetes run.

A process that runs once (`once = true`: migrate) runs its commands in order and exits with the first failure's
status. A long-running one has exactly one command, and this process becomes it (exec): the orchestrator's SIGTERM
reaches it directly, with no shell or supervisor in between to swallow it. ARGS, if any, are added to that command.

`entrypoint.py --prepare` runs every role's `prepare` commands (collectstatic): once per build of the image.

Plain Python (the standard library only): it runs before anything of the app is imported.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

# deploy/container/entrypoint.py: the install's directory is two levels up, where every command runs from.
ROOT = Path(__file__).resolve().parent.parent.parent
PROCESSES = ROOT / "deploy" / "processes.toml"
IMAGE = "central"
PREPARE = "--prepare"


class EntrypointError(Exception):
    """A refusal to start, printed as one line (exit status 2)."""


def load(path: Path = PROCESSES) -> dict[str, dict]:
    try:
        with path.open("rb") as handle:
            processes = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise EntrypointError(f"cannot read the list of processes {path}: {exc}") from None
    return processes


def roles(processes: dict[str, dict]) -> dict[str, dict]:
    """The processes this image runs, by name."""
    return {name: spec for name, spec in processes.items() if spec.get("image") == IMAGE}


def commands(spec: dict, key: str = "commands") -> list[list[str]]:
    found = spec.get(key, [])
    if not isinstance(found, list) or not all(
        isinstance(argv, list) and argv and all(isinstance(word, str) for word in argv) for argv in found
    ):
        raise EntrypointError(f"{PROCESSES.name}: {key} must be a list of non-empty argv lists")
    return found


def plan(argv: list[str], processes: dict[str, dict]) -> tuple[bool, list[list[str]]]:
    """(exec the single command, the commands) for the command line `argv` (without the program's name)."""
    known = roles(processes)
    if not argv or (argv[0] not in known and argv[0] != PREPARE):
        given = f"unknown role {argv[0]!r}" if argv else "no role given"
        raise EntrypointError(f"{given}: give one of {', '.join(sorted(known))} (deploy/processes.toml)")
    role, extra = argv[0], argv[1:]
    if role == PREPARE:
        if extra:
            raise EntrypointError(f"{PREPARE} takes no arguments")
        return False, [command for spec in known.values() for command in commands(spec, "prepare")]
    spec = known[role]
    steps = commands(spec)
    if spec.get("once"):
        if extra:
            raise EntrypointError(f"{role} runs its commands in order and takes no arguments")
        return False, steps
    if len(steps) != 1:
        raise EntrypointError(f"{PROCESSES.name}: {role} is long-running and must have exactly one command")
    return True, [steps[0] + extra]


def run_forwarding_signals(command: list[str]) -> int:
    """Run a step to its end; a SIGTERM or SIGINT sent to this process (the container's first, the one an
    orchestrator signals) is passed on to it, so a stopped one-shot stops its step rather than orphaning it."""
    try:
        child = subprocess.Popen(command, cwd=ROOT)
    except OSError as exc:
        raise EntrypointError(f"cannot start {command[0]}: {exc.strerror}") from None

    def forward(signum: int, _frame: object) -> None:
        child.send_signal(signum)

    previous = {signum: signal.signal(signum, forward) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        return child.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run(argv: list[str], processes: dict[str, dict] | None = None) -> int:
    replace, steps = plan(argv, load() if processes is None else processes)
    if replace:
        (command,) = steps
        os.chdir(ROOT)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            raise EntrypointError(f"cannot start {command[0]}: {exc.strerror}") from None
    for command in steps:
        print(f"entrypoint: {' '.join(command)}", flush=True)
        status = run_forwarding_signals(command)
        if status != 0:
            print(f"entrypoint: {command[0]} exited with status {status}", file=sys.stderr, flush=True)
            return status if status > 0 else 128 - status
    return 0


def main() -> int:
    try:
        return run(sys.argv[1:])
    except EntrypointError as exc:
        print(f"entrypoint: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
