"""An incremental Server-Sent Events parser, as the WHATWG specification says.

Bytes arrive in arbitrary pieces: a read may end inside a multi-byte UTF-8
character, between the CR and LF of a CRLF, or in the middle of a field. The
parser keeps the unfinished line as bytes and only decodes complete lines, so
no split can corrupt a character. Each dispatched event carries the timestamp
of the read that completed it, because that is when the client could have
acted on it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class SSEEvent:
    event: str  # "message" unless an `event:` field said otherwise
    data: str
    id: str | None
    at_ns: int  # perf_counter_ns of the read that completed the event


@dataclass(slots=True)
class SSEComment:
    text: str
    at_ns: int


class SSEParser:
    def __init__(self) -> None:
        self._pending = b""  # bytes of the line not finished yet
        self._skip_lf = False  # the last piece ended with CR: a leading LF belongs to it
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._has_fields = False
        self._first_line = True

    def feed(self, chunk: bytes, at_ns: int) -> list[SSEEvent | SSEComment]:
        out: list[SSEEvent | SSEComment] = []
        if not chunk:
            return out
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        buf = self._pending + chunk
        start = 0
        n = len(buf)
        while True:
            # Find the next line end of any of the three kinds.
            cr = buf.find(b"\r", start)
            lf = buf.find(b"\n", start)
            if cr == -1 and lf == -1:
                break
            if cr == -1 or (lf != -1 and lf < cr):
                end, nxt = lf, lf + 1
            else:
                end = cr
                if cr + 1 < n:
                    nxt = cr + 2 if buf[cr + 1 : cr + 2] == b"\n" else cr + 1
                else:
                    # CR at the very end: the LF of a CRLF may be in the next read.
                    nxt = cr + 1
                    self._skip_lf = True
            self._line(buf[start:end], at_ns, out)
            start = nxt
        self._pending = buf[start:]
        return out

    def _line(self, raw: bytes, at_ns: int, out: list) -> None:
        if self._first_line:
            self._first_line = False
            if raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
        line = raw.decode("utf-8", errors="replace")
        if line == "":
            if self._has_fields:  # at least one data line
                out.append(SSEEvent(self._event or "message", "\n".join(self._data), self._id, at_ns))
            self._data = []
            self._event = ""
            self._has_fields = False
            return
        if line.startswith(":"):
            out.append(SSEComment(line[1:].lstrip(" "), at_ns))
            return
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._has_fields = True
        elif name == "event":
            # An event with no data line is never dispatched (per the
            # specification), so `event:` alone does not open one.
            self._event = value
        elif name == "id" and "\x00" not in value:
            self._id = value
        # `retry` and unknown fields are ignored, as the specification says.

    @property
    def has_partial_event(self) -> bool:
        """True when the stream ended inside an event (it is discarded)."""
        return self._has_fields or bool(self._pending)
