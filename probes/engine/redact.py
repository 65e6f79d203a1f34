"""Keeping secrets out of every message the engine reports.

A provider may echo the key it was sent (in a JSON error, a text body, an SSE
line), an HTTP library may quote a header it refused (b'Bearer sk-...\\n'),
and messages are cut to a length before they are stored. Replacing the exact
key misses all of those: a cut leaves most of it, an escape or a percent-
encoding changes it. So every run of WINDOW characters of every form of every
secret is redacted, before anything is cut: whatever survives holds fewer
than WINDOW consecutive characters of a key.
"""

from __future__ import annotations

import json
import re
from typing import overload
from urllib.parse import quote, quote_plus

WINDOW = 8
MAX_ERROR = 300
# Bounds the work on a long error body; whatever is past it is never shown.
_SCAN_LIMIT = 8192
REDACTED = "[redacted]"
# Query strings may carry keys (Gemini's ?key=): never echo them.
_KEY_QUERY = re.compile(r"([?&](?:key|api_key|apikey|token|access_token)=)[^&\s'\"]+")


def _forms(secret: str) -> set[str]:
    """The ways a secret can be written in a message."""
    forms: set[str] = set()
    for s in {secret, secret.strip(), " ".join(secret.split())}:
        forms.add(s)
        forms.add(repr(s)[1:-1])  # Python's str repr: \n, \x00, \u201d
        forms.add(s.encode("unicode_escape").decode("ascii"))
        forms.add(repr(s.encode("utf-8", "surrogateescape"))[2:-1])  # bytes repr, as h11 quotes a header
        forms.add(json.dumps(s)[1:-1])
        forms.add(json.dumps(s)[1:-1].replace("/", "\\/"))  # PHP-style JSON escapes slashes
        forms.add(quote(s, safe=""))
        forms.add(quote(s))
        forms.add(quote_plus(s, safe=""))
        forms.add(quote(s, safe="").lower())  # %2b as well as %2B
    return forms


class Redactor:
    def __init__(self, secrets: list[str]) -> None:
        self._secrets = list(secrets)
        self._windows: set[str] = set()
        self._short: set[str] = set()
        self._built = False

    def _build(self) -> None:
        # Lazily: most calls succeed and never redact anything.
        self._built = True
        for secret in self._secrets:
            if not secret or not secret.strip():
                continue
            for form in _forms(secret):
                if len(form) < WINDOW:
                    # A key shorter than a window is redacted whole.
                    if len(form.strip()) >= 4:
                        self._short.add(form.strip())
                    continue
                self._windows.update(form[i : i + WINDOW] for i in range(len(form) - WINDOW + 1))

    @overload
    def __call__(self, message: str, limit: int | None = MAX_ERROR) -> str: ...
    @overload
    def __call__(self, message: None, limit: int | None = MAX_ERROR) -> None: ...
    def __call__(self, message: str | None, limit: int | None = MAX_ERROR) -> str | None:
        """The message with every secret window replaced, whitespace
        collapsed to single spaces, then (and only then) cut to `limit`."""
        if message is None:
            return None
        if not self._built:
            self._build()
        text = str(message)[:_SCAN_LIMIT]
        # Twice: once as written, once with whitespace collapsed (which can
        # join the pieces of a key written across a line break).
        text = self._cover(text)
        text = " ".join(text.split())
        text = self._cover(text)
        text = _KEY_QUERY.sub(r"\1" + REDACTED, text)
        return text[:limit] if limit is not None else text

    def _cover(self, text: str) -> str:
        for short in self._short:
            text = text.replace(short, REDACTED)
        if not self._windows or len(text) < WINDOW:
            return text
        windows = self._windows
        covered_to = -1  # end (exclusive) of the run being covered
        runs: list[list[int]] = []
        for i in range(len(text) - WINDOW + 1):
            if text[i : i + WINDOW] in windows:
                if runs and i <= covered_to:
                    runs[-1][1] = i + WINDOW
                else:
                    runs.append([i, i + WINDOW])
                covered_to = i + WINDOW
        if not runs:
            return text
        out: list[str] = []
        pos = 0
        for start, end in runs:
            out.append(text[pos:start])
            out.append(REDACTED)
            pos = end
        out.append(text[pos:])
        return "".join(out)
