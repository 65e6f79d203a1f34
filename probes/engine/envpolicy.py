"""What a target may make a worker read: environment variables and CA bundles.

A target names the variable its key is read from (api_key_env) and variables
in its headers (${VAR}), and the worker sends their values to the target's
URL, which whoever edits the target chooses. A name is therefore a request to
send that variable anywhere: the site's own variables (the region's
credential, the broker and database URLs, the secret key) can never be named,
and a worker reads only the variables its operator allows
(LATENCY_PROVIDER_ENV). The same holds for files: a target's CA bundle is a
file name inside the directory the worker names (LATENCY_CA_DIR), and every
way a bundle can fail reads the same, so a target cannot probe the worker's
disk.

Plain Python: the engine enforces this at the worker, and the central side's
validators (model, admin, API, `atlas apply`, a channel's url_env) refuse the
site's own names with the same definition. The central side cannot know a
worker's allowlist; only the worker can say a name is outside it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

PROVIDER_ENV = "LATENCY_PROVIDER_ENV"
CA_DIR = "LATENCY_CA_DIR"

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")

# The site's own variables, as rules ("NAME", "PREFIX*", "*SUFFIX"). *_FILE:
# the convention for a secret given as a file's path (SECRET_KEY_FILE), whose
# value would let a target name a file on the worker.
SITE_RULES = ("LATENCY_*", "CELERY_*", "DATABASE_URL", "REDIS_URL", "SECRET_KEY", "*_FILE")
SITE_VARIABLES = ", ".join(SITE_RULES)
DEFAULT_ALLOWED = ("*_API_KEY", "*_TOKEN")


def _matches(rule: str, name: str) -> bool:
    if rule.endswith("*"):
        return name.startswith(rule[:-1])
    if rule.startswith("*"):
        return name.endswith(rule[1:])
    return name == rule


def site_rule(name: str) -> str | None:
    """The rule that makes `name` one of the site's own variables, or None.
    Upper-cased first: on a system with case-insensitive variables (or a
    reader that upper-cases) `database_url` is the same secret."""
    upper = name.upper()
    return next((rule for rule in SITE_RULES if _matches(rule, upper)), None)


def site_variable_problem(name: str) -> str | None:
    """Why a target can never name this variable, or None."""
    if site_rule(name) is None:
        return None
    return (
        f"{name} is one of the site's own variables ({SITE_VARIABLES}): a target sends what it names to its "
        "URL, so it can never name one"
    )


@dataclass(frozen=True)
class Allowlist:
    """The variables a worker lets its targets read: rules of the form NAME,
    PREFIX* or *SUFFIX. The site's own variables are never admitted."""

    rules: tuple[str, ...] = DEFAULT_ALLOWED

    def admits(self, name: str) -> bool:
        if site_rule(name) is not None:
            return False
        return any(_matches(rule, name) for rule in self.rules)


def parse_allowlist(text: str | None) -> Allowlist:
    """LATENCY_PROVIDER_ENV: comma-separated NAME, PREFIX* or *SUFFIX entries;
    empty or unset gives the default. ValueError naming the variable and the
    entry. The site's own variables are never admitted whatever the list
    says, and an entry that could admit nothing else (LATENCY_REGION_KEY_*,
    DATABASE_URL, *_FILE) refuses the whole list: whoever wrote it expects
    the worker to send those, which it never will."""
    entries = [entry.strip() for entry in (text or "").split(",") if entry.strip()]
    if not entries:
        return Allowlist()
    for entry in entries:
        prefix, suffix = entry.endswith("*"), entry.startswith("*")
        bare = entry.strip("*")
        if (prefix and suffix) or not bare or "*" in bare or not re.fullmatch(r"[A-Za-z0-9_]+", bare):
            raise ValueError(
                f"{PROVIDER_ENV}: {entry[:60]!r} is not a variable name, PREFIX* or *SUFFIX "
                "(e.g. OPENAI_API_KEY,ACME_*,*_API_KEY)"
            )
        if not suffix and not ENV_NAME.match(bare):
            raise ValueError(f"{PROVIDER_ENV}: {entry[:60]!r} cannot begin a variable name (it starts with a digit)")
        rule = _only_site(bare.upper(), prefix=prefix, suffix=suffix)
        if rule is not None:
            raise ValueError(
                f"{PROVIDER_ENV}: {entry[:60]} names the site's own variables ({rule}), which a worker never sends "
                "to a target; remove it"
            )
    return Allowlist(tuple(entries))


def _only_site(bare: str, *, prefix: bool, suffix: bool) -> str | None:
    """The site rule that holds every name this entry admits, or None."""
    for rule in SITE_RULES:
        if prefix and rule.endswith("*") and bare.startswith(rule[:-1]):
            return rule
        if suffix and rule.startswith("*") and bare.endswith(rule[1:]):
            return rule
    return site_rule(bare) if not (prefix or suffix) else None


def ca_bundle_problem(value: str) -> str | None:
    """Why this cannot name a file inside a worker's CA directory, or None.
    Checked where it is typed; the worker checks again after resolving links."""
    if "\x00" in value or "\\" in value:
        return "contains a NUL or a backslash"
    path = PurePosixPath(value)
    if path.is_absolute():
        return "is an absolute path"
    if ".." in path.parts:
        return "goes up a directory (..)"
    return None


CA_UNUSABLE = f"not a readable PEM CA bundle inside this worker's {CA_DIR}"
CA_NONE = f"this worker allows no CA bundle (its operator sets {CA_DIR} to the directory of its bundles)"


@dataclass(frozen=True)
class WorkerEnv:
    """What the engine lets a target use on this host, read once at start:
    the variables it may read and the directory its CA bundles come from
    (its real path; None: no CA bundle at all)."""

    allowed: Allowlist = Allowlist()
    ca_dir: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WorkerEnv:
        """From LATENCY_PROVIDER_ENV and LATENCY_CA_DIR; ValueError naming the variable."""
        env = os.environ if env is None else env
        allowed = parse_allowlist(env.get(PROVIDER_ENV))
        raw = (env.get(CA_DIR) or "").strip()
        if not raw:
            return cls(allowed, None)
        if not os.path.isabs(raw):
            raise ValueError(f"{CA_DIR}={raw[:200]} is not an absolute path (give the directory of CA bundles)")
        if not os.path.isdir(raw):
            raise ValueError(f"{CA_DIR}={raw[:200]} is not a directory (give the directory of CA bundles)")
        return cls(allowed, os.path.realpath(raw))

    def variable_problem(self, name: str) -> str | None:
        """Why the engine will not read this variable for a target, or None.
        Never says whether it is set: asking must not tell."""
        problem = site_variable_problem(name)
        if problem is not None:
            return f"environment variable {problem}"
        if not self.allowed.admits(name):
            return (
                f"environment variable {name} is not one this worker lets targets read: add it to "
                f"{PROVIDER_ENV} on the worker (names, PREFIX* or *SUFFIX; unset, it admits names ending in "
                "_API_KEY or _TOKEN)"
            )
        return None

    def ca_path(self, name: str) -> tuple[str | None, str]:
        """(the file to load, "") or (None, why not). A name outside the
        directory (absolute, .., a link leading out) reads as a missing file,
        and a missing file as one that holds no PEM certificate (the engine's
        text when loading fails)."""
        if self.ca_dir is None:
            return None, CA_NONE
        if "\x00" in name:
            return None, CA_UNUSABLE
        real = os.path.realpath(os.path.join(self.ca_dir, name))
        # isfile: a directory or a FIFO (whose read would block) is no bundle either.
        if os.path.commonpath([real, self.ca_dir]) != self.ca_dir or not os.path.isfile(real):
            return None, CA_UNUSABLE
        return real, ""
