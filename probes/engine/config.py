"""What a probe's configuration must be for its request to be sent at all.

A target that HTTP cannot carry (a header with a non-ASCII character, a key
with a line break, a host name DNS cannot encode), or that names a variable or
a CA file this worker does not let targets use (probes.engine.envpolicy), is
a configuration error: the engine reports it as a measurement with outcome
config_error, naming the field and never its value, instead of
raising on every run. The admin runs the same checks on save (those that do
not depend on the worker), so most mistakes never reach a worker.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field

import idna

from probes.engine.envpolicy import WorkerEnv

ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# RFC 9110 token characters.
HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
# Framing and connection headers belong to the HTTP client: a second
# Content-Length or a Host of our own would make the request malformed or
# send it somewhere other than the URL says.
RESERVED_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "proxy-connection",
    }
)
# An ASCII DNS label as resolvers accept it: letters, digits, hyphens inside;
# underscores too, as container and service names use them.
_ASCII_LABEL = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?\Z")


class ConfigProblem(ValueError):
    """The probe as configured cannot be sent. The message names the field
    (url, headers, api_key_env, ca_bundle, model) and never holds its value."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.reason = message


def char_problem(value: str) -> str | None:
    """Why this text cannot be an HTTP header value, or None. A header value
    is visible ASCII, spaces and tabs (httpx encodes it as ASCII; h11
    refuses control characters)."""
    for ch in value:
        if ch == "\t" or " " <= ch <= "~":
            continue
        if ch < " " or ch == "\x7f":
            return f"contains a control character (U+{ord(ch):04X})"
        return f"contains a non-ASCII character (U+{ord(ch):04X})"
    return None


def host_problem(host: str | None) -> str | None:
    """Why DNS cannot be asked for this host name, or None."""
    if not host:
        return "has no host name"
    try:
        ipaddress.ip_address(host.strip("[]"))
        return None
    except ValueError:
        pass
    name = host[:-1] if host.endswith(".") else host
    if len(name) > 253:
        return "host name is longer than 253 characters"
    for label in name.split("."):
        if not label:
            return "host name has an empty label (two dots in a row, or a leading dot)"
        if label.isascii():
            if not _ASCII_LABEL.match(label):
                return "host name has a label with characters other than letters, digits and inner hyphens"
            if label[:4].lower() == "xn--":
                # An A-label must decode to a valid internationalised label.
                try:
                    idna.decode(label)
                except (idna.IDNAError, UnicodeError):
                    return "host name has an xn-- label that is not valid punycode"
            encoded = label
        else:
            # What httpx does with a non-ASCII host (IDNA 2008, lower-cased):
            # a soft hyphen or a symbol fails here rather than on every run.
            try:
                encoded = idna.encode(label.lower()).decode("ascii")
            except (idna.IDNAError, UnicodeError):
                return "host name has a label that is not a valid internationalised name (IDNA 2008)"
        if len(encoded) > 63:
            return "host name has a label longer than 63 characters"
    return None


def header_problem(name: object, value: object) -> str | None:
    """Why this configured header (before ${VAR} expansion) cannot be sent."""
    if not isinstance(name, str) or not HEADER_NAME.match(name):
        return "a header name is not a valid HTTP token"
    if name.lower() in RESERVED_HEADERS:
        return f'header "{name}" is set by the HTTP client itself and cannot be configured'
    if not isinstance(value, str):
        return f'header "{name}" must have a string value'
    problem = char_problem(ENV_REF.sub("", value))
    if problem:
        return f'header "{name}" {problem}'
    return None


@dataclass
class Credentials:
    """What was read from the environment for one call."""

    api_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # Every value read from the environment, as read and as trimmed: the
    # redactor keeps all of them out of what is reported.
    secrets: list[str] = field(default_factory=list)
    # Variables that were referred to but unset, with where: named in the
    # error of a failed call.
    unset: list[str] = field(default_factory=list)


def _env(name: str, creds: Credentials) -> str | None:
    raw = os.environ.get(name)
    if not raw:
        return None
    creds.secrets.append(raw)
    # Surrounding whitespace is trimmed: a secret made from a file ends in a
    # newline, a .env saved on Windows in \r. Nobody's key ends in a space.
    value = raw.strip()
    if value != raw and value:
        creds.secrets.append(value)
    return value or None


def check_names(api_key_env: str, headers: dict[str, str], worker_env: WorkerEnv) -> None:
    """ConfigProblem when the probe names a variable this worker does not let
    targets read: checked before any is read, so a refused one never is."""
    if api_key_env:
        problem = worker_env.variable_problem(api_key_env)
        if problem:
            raise ConfigProblem("api_key_env", problem)
    for name, value in headers.items():
        for var in ENV_REF.findall(value) if isinstance(value, str) else ():
            problem = worker_env.variable_problem(var)
            if problem:
                raise ConfigProblem("headers", f'header "{name}": {problem}')


def read_credentials(api_key_env: str, headers: dict[str, str], creds: Credentials, worker_env: WorkerEnv) -> None:
    """Fill creds from the environment; ConfigProblem when a value cannot be
    sent or a variable may not be read here. creds.secrets is filled first,
    so the caller can redact whatever happens next."""
    check_names(api_key_env, headers, worker_env)
    key = _env(api_key_env, creds) if api_key_env else None
    if api_key_env and key is None:
        creds.unset.append(api_key_env)
    expanded: dict[str, str] = {}
    for name, value in headers.items():
        problem = header_problem(name, value)
        if problem:
            raise ConfigProblem("headers", problem)
        bad_var: list[str] = []

        def expand(m: re.Match, name: str = name, bad_var: list[str] = bad_var) -> str:
            val = _env(m.group(1), creds)
            if val is None:
                creds.unset.append(f"{m.group(1)} (header {name})")
                return ""
            if char_problem(val):
                bad_var.append(m.group(1))
            return val

        # ${VAR} in a header value is read from the environment at call time,
        # so a secret header never has to be stored with the probe.
        text = ENV_REF.sub(expand, value)
        if bad_var:
            raise ConfigProblem(
                "headers",
                f'header "{name}": environment variable {bad_var[0]} {char_problem(os.environ[bad_var[0]].strip())}',
            )
        expanded[name] = text.strip(" \t")
    if key is not None:
        problem = char_problem(key)
        if problem:
            raise ConfigProblem("api_key_env", f"environment variable {api_key_env} {problem}")
    creds.api_key = key
    creds.headers = expanded
