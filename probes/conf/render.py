"""The files generated from the one list of settings (probes.conf.catalog): the configuration reference page and
the deploy examples. `make settings-docs` (manage.py settings_reference --write) writes them;
tests/settings_catalog fails while a committed copy differs from what this renders."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable

from probes.conf.catalog import CENTRAL, CHECKS, GROUPS, READERS, RETIRED, SETTINGS, WORKER, Setting

GENERATED = "probes/conf/catalog.py, by `make settings-docs`"
WIDTH = 118

READER_NAMES = {
    "site": "web",
    "ingest": "ingest",
    "scheduler": "scheduler",
    "worker": "region worker",
}


def _markdown_text(text: str) -> str:
    """Meaning text for a table cell: outside `code`, the characters Markdown would read as markup escaped."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("\\", "\\\\").replace("*", "\\*").replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts).replace("|", "\\|")


def _code(value: str) -> str:
    return f"`{value}`" if value else "empty"


def _name(entry: Setting) -> str:
    return f"{entry.name}<SLUG>" if entry.prefix else entry.name


def _row(entry: Setting) -> str:
    default = entry.default_text if entry.default_text is not None else _code(entry.shown_default())
    accepted = entry.bounds() or entry.kind
    readers = ", ".join(READER_NAMES[r] for r in READERS if r in entry.readers)
    meaning = ("**Secret.** " if entry.secret else "") + _markdown_text(entry.meaning)
    return f"| `{_name(entry)}` | {default} | {accepted} | {readers} | {meaning} |"


def reference_page() -> str:
    lines = [
        "<!-- Generated from " + GENERATED + ": edit the list there, not this page. -->",
        "",
        "# Configuration reference",
        "",
        "Every process reads its configuration from the environment: the web process, the ingest worker and the",
        "scheduler from `/etc/latency-atlas/latency.env` (`deploy/latency.env.example`), a region worker from",
        "`/etc/latency-atlas/region.env` (`deploy/region.env.example`). A value that cannot be read (`DEBUG=flase`,",
        "a number out of range) stops start-up with a message naming the variable; `manage.py check` also reports",
        "the mistakes a value alone does not show (`latency.E…` errors, `latency.W…` warnings). Secrets are never",
        "logged or shown.",
        "",
        "**Secrets as files.** Every secret below (SECRET_KEY, DATABASE_URL, the broker URLs, the region keys) can",
        "be given as a file instead, as Docker and Kubernetes mount secrets: `NAME_FILE=/run/secrets/name` makes the",
        "file's contents (one final line ending dropped) the value of NAME. A region worker reads the providers' keys",
        "its `LATENCY_PROVIDER_ENV` admits the same way (`OPENAI_API_KEY_FILE`). Setting NAME and NAME_FILE to",
        "different values, a file that cannot be read and an empty file stop start-up, naming the variable.",
        "",
        "*Read by*: **web** is the web process (and the `manage.py` commands of `latency-migrate`), **ingest** the",
        "ingest worker (which also runs rollups, pruning, alerts and missed runs), **scheduler** the scheduler,",
        "**region worker** `latency-atlas worker`. Every central process loads the same settings, so a bad value",
        "stops all three.",
        "",
    ]
    for group in GROUPS:
        entries = [entry for entry in SETTINGS if entry.group == group]
        lines += [
            f"## {group}",
            "",
            "| Variable | Default | Accepted | Read by | Meaning |",
            "| --- | --- | --- | --- | --- |",
            *(_row(entry) for entry in entries),
            "",
        ]
    lines += [
        "## What `manage.py check` reports",
        "",
        "Besides values it cannot read, which stop every process at once, `manage.py check` (run by `migrate`,",
        "so by `latency-migrate` before the site starts) reports these; an error stops the command.",
        "",
        "| Id | Reported when |",
        "| --- | --- |",
        *(f"| `{id_}` | {_markdown_text(text)} |" for id_, text in CHECKS.items()),
        "",
    ]
    lines += ["## Retired variables", "", "Setting one of these stops start-up with what replaced it.", ""]
    lines += [f"- `{name}`: {_markdown_text(text)}." for name, text in RETIRED.items()]
    return "\n".join(lines) + "\n"


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH - 2, initial_indent="# ", subsequent_indent="# ", break_on_hyphens=False)


def _env_value(value: str) -> str:
    # systemd's EnvironmentFile= takes a value as it stands; quotes only where it would otherwise split or strip.
    return f'"{value}"' if re.search(r"\s", value) else value


def _commented_value(entry: Setting) -> str:
    if entry.example is not None:
        return entry.example
    if isinstance(entry.default, bool):
        return "true" if entry.default else "false"
    if isinstance(entry.default, tuple):
        return ",".join(entry.default)
    if isinstance(entry.default, float):
        return f"{entry.default:g}"
    return "" if entry.default_text is not None else str(entry.default)


def _env_lines(entries: Iterable[Setting], is_set: Callable[[Setting], bool]) -> list[str]:
    lines: list[str] = []
    group = None
    for entry in entries:
        if entry.group != group:
            group = entry.group
            lines += ["", f"# --- {group} " + "-" * max(3, WIDTH - 7 - len(group))]
        lines += _comment(entry.meaning)
        name = f"{entry.name}AF_LAGOS" if entry.prefix else entry.name
        if is_set(entry):
            lines.append(f"{name}={_env_value(entry.example or '')}")
        else:
            lines.append(f"#{name}={_env_value(_commented_value(entry))}")
        lines += [f"#{name}={_env_value(value)}" for value in entry.alternatives]
    return lines


def site_env_example() -> str:
    header = [
        "# /etc/latency-atlas/latency.env: the environment of the web server, the ingest worker, the scheduler and",
        "# latency-migrate (never of region workers: they read region.env). Owned by root, mode 0640, group latency:",
        "#   install -m 0640 -o root -g latency deploy/latency.env.example /etc/latency-atlas/latency.env",
        "# systemd reads it (EnvironmentFile=): one VARIABLE=value per line, no `export`, no spaces around `=`.",
        "# Lines without # are what production needs set; the others show an example or the default.",
        "# Generated from " + GENERATED + ";",
        "# docs/reference/configuration.md describes every variable.",
    ]
    entries = [entry for entry in _ordered() if set(entry.readers) & set(CENTRAL)]
    return "\n".join(header + _env_lines(entries, lambda e: e.required)) + "\n"


def region_env_example() -> str:
    header = [
        "# /etc/latency-atlas/region.env: the environment of a region worker (latency-region@SLUG), on a host in",
        "# the region (or on the central host). Only the worker is installed there (requirements/worker.txt,",
        "# then the package with pip install --no-deps: no Django, no database driver; see",
        "# docs/guides/add-a-region.md): the broker, the region's credential and the providers' keys.",
        "# No DATABASE_URL, no SECRET_KEY: a region host never sees either.",
        "#   install -m 0640 -o root -g latency deploy/region.env.example /etc/latency-atlas/region.env",
        "# Settings for one region only go in /etc/latency-atlas/region-SLUG.env (read after this file).",
        "# Generated from " + GENERATED + ";",
        "# docs/reference/configuration.md describes every variable.",
    ]
    entries = [entry for entry in _ordered() if WORKER in entry.readers]
    # Set here only what a region host alone needs: the central site's required values (REDIS_URL) are a
    # fallback on a worker, not what it is given.
    lines = header + _env_lines(entries, lambda e: e.required and not set(e.readers) & set(CENTRAL))
    lines += [
        "",
        "# --- Providers' keys " + "-" * (WIDTH - 21),
        '# The API keys your targets name in the admin ("API key environment variable"), by that name',
        "# (LATENCY_PROVIDER_ENV above says which names targets may use):",
        "#OPENAI_API_KEY=",
        "#ANTHROPIC_API_KEY=",
        "#GEMINI_API_KEY=",
    ]
    return "\n".join(lines) + "\n"


def _ordered() -> list[Setting]:
    """Region-worker variables first in the region file would read better, but one order (the list's groups) for
    every output keeps a variable's place predictable."""
    return sorted(SETTINGS, key=lambda entry: GROUPS.index(entry.group))


# Each generated file, by its path in the repository, and what renders it.
OUTPUTS: dict[str, Callable[[], str]] = {
    "docs/reference/configuration.md": reference_page,
    "deploy/latency.env.example": site_env_example,
    "deploy/region.env.example": region_env_example,
}
