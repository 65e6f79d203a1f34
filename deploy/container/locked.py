"""`locked.py LOCK NAME...`: the entries of a hash-locked requirements file (requirements/*.txt, `make lock`) for the
distributions named, with their hashes, as a requirements file of their own on stdout: the images install a few
distributions of the dev lock (setuptools to install the package, the demo's mock-server ones) hash-checked, without
the whole dev list. A name not in the lock is an error (exit status 2). Plain Python, run by the image builds.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def entries(text: str) -> dict[str, str]:
    """{canonical name: the entry's lines (requirement and --hash continuations)} of a uv-compiled lock."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if current is not None and line.startswith(" ") and line.strip().startswith("--hash"):
            current.append(line)
            continue
        current = None
        match = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==", line)
        if match:
            current = [line]
            found[canonical(match.group(1))] = current
    return {name: "\n".join(lines).rstrip(" \\") + "\n" for name, lines in found.items()}


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: locked.py LOCK NAME...", file=sys.stderr)
        return 2
    lock, names = Path(argv[0]), argv[1:]
    known = entries(lock.read_text())
    missing = [name for name in names if canonical(name) not in known]
    if missing:
        print(f"locked.py: not in {lock}: {', '.join(missing)}", file=sys.stderr)
        return 2
    sys.stdout.write("".join(known[canonical(name)] for name in names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
