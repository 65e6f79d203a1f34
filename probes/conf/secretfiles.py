"""Secrets given as files (issue 51): Docker and Kubernetes mount a secret as a file, and a variable holding it
shows in `docker inspect`, `/proc/<pid>/environ` of anyone who may read it, and crash reports. NAME_FILE names the
file whose contents are NAME's value, the convention of the official images (POSTGRES_PASSWORD_FILE).

Which NAME may come from a file: a setting the catalogue marks secret (SECRET_KEY, DATABASE_URL, the broker URLs,
the region keys, LATENCY_REGION_KEY_<SLUG> included) and, on a region worker, a provider's variable its allowlist
lets targets read (OPENAI_API_KEY_FILE). Any other *_FILE variable is not ours and is left alone (SSL_CERT_FILE).

The file's contents are the value, one final line ending dropped (what `echo` and most editors add). A NAME set
both ways, a file that cannot be read and an empty file all refuse to start, naming the variable and the path,
never the contents. Plain Python: the site's settings and the region worker both call it before reading anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping

from probes.conf import catalog

SUFFIX = "_FILE"


class SecretFileError(ValueError):
    """A refusal to start, one line naming the variable."""


def catalogue_secret(name: str) -> bool:
    return catalog.declared(name) and catalog.setting(name).secret


def read(env: Mapping[str, str], may_be_secret: Callable[[str], bool] = catalogue_secret) -> dict[str, str]:
    """{NAME: value} for every NAME_FILE of env whose NAME may be a secret; SecretFileError on the first bad one."""
    found: dict[str, str] = {}
    for variable in sorted(env):
        name = variable[: -len(SUFFIX)]
        if not variable.endswith(SUFFIX) or not name or not may_be_secret(name):
            continue
        path = env[variable].strip()
        if not path:
            raise SecretFileError(f"{variable} is empty: give the path of the file holding {name}")
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
            raise SecretFileError(f"{variable}={path[:200]} cannot be read ({reason})") from None
        value = text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
        if not value.strip():
            raise SecretFileError(f"{variable}={path[:200]} is empty: it must hold {name}")
        # The same value both ways is this module's own doing (a second read of an environment it filled).
        if (env.get(name) or "").strip() and env[name] != value:
            raise SecretFileError(f"{name} and {variable} are both set: give the secret one way")
        found[name] = value
    return found


def apply(environ: MutableMapping[str, str], may_be_secret: Callable[[str], bool] = catalogue_secret) -> None:
    """Put every secret read from a file (read) into environ, where every reader of NAME finds it."""
    environ.update(read(environ, may_be_secret))
