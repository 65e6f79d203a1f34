"""Where the code reaches into a library's private names: one module per library, and nowhere else.

A private name can change in any release. Each module here states the range of releases it was read against and
checks the installed version when it is imported, so a release outside the range stops the process at start with
one line naming the library, the version found and the range, instead of failing later inside a measurement. The
same range bounds the library in pyproject.toml; to move it, read the module against the new release, then widen
both.
"""

from __future__ import annotations

import re
from importlib import metadata


class UnsupportedVersion(ImportError):
    """A library's installed release is outside the range its compat module was read against."""


def _release(version: str) -> tuple[int, ...]:
    """The numeric release of a version string ("1.0.9" -> (1, 0, 9); "5.7.0rc1" -> (5, 7, 0))."""
    match = re.match(r"\d+(?:\.\d+)*", version.strip())
    if match is None:
        raise UnsupportedVersion(f"cannot read the version {version!r}")
    return tuple(int(part) for part in match[0].split("."))


def supported(found: str, minimum: str, below: str) -> bool:
    """Whether `found` is at least `minimum` and below `below` (compared release by release, 1.10 after 1.9)."""
    found_release = _release(found)
    return _release(minimum) <= found_release < _release(below)


def require(distribution: str, minimum: str, below: str, *, module: str, found: str | None = None) -> str:
    """The installed version of `distribution`, or UnsupportedVersion when it is outside [minimum, below)."""
    version = metadata.version(distribution) if found is None else found
    if not supported(version, minimum, below):
        raise UnsupportedVersion(
            f"{distribution} {version} is installed, but {module} reaches into its private names and supports "
            f"{distribution} >={minimum},<{below} only: install a release in that range (requirements/*.txt), or "
            f"read {module} against {distribution} {version} and widen its range and pyproject.toml's"
        )
    return version
