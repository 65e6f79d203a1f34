"""Local receivers for notifications, over real sockets on loopback: a JSON webhook (what Apprise's
json:// posts to) and an SMTP server (aiosmtpd, what Apprise's mailto:// sends to).

Each records what arrived and can be made to fail, so a test can watch a delivery be retried and
then succeed. Both are context managers and run in threads of the test process:

    with JsonReceiver() as hook:
        url = hook.apprise_url("/alerts")          # json://127.0.0.1:PORT/alerts
        hook.fail_next(2, status=503)               # the next two POSTs answer 503
        hook.down()                                 # the port is closed: connection refused
        hook.up()                                   # listening again, on the same port
        hook.wait_for_posts(1, timeout=10)

    with SmtpReceiver() as smtp:
        url = smtp.apprise_url(to="oncall@example.com")
        smtp.wait_for_messages(1, timeout=10)[0].subject

Development tooling, never imported by the app packages (devtools/__init__.py).
"""

from __future__ import annotations

import email
import email.policy
import json
import socket
import threading
from dataclasses import dataclass, field
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

from aiosmtpd.controller import Controller

from devtools.harness import wait_for

LOOPBACK = "127.0.0.1"


# --- JSON webhook -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Post:
    """One POST as the receiver saw it; `status` is what it answered."""

    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON, or None when the body was not JSON
    raw: bytes
    status: int


class _HookServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True  # `up()` binds the same port again right after `down()`
    receiver: JsonReceiver


class _HookHandler(BaseHTTPRequestHandler):
    server: _HookServer
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        status = self.server.receiver._answer(self.path, dict(self.headers.items()), body, raw)
        answer = json.dumps({"ok": status < 400}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: object) -> None:
        # Quiet: the test asserts on `posts`, and stderr noise hides failures.
        return


class JsonReceiver:
    """A webhook receiver on 127.0.0.1 (an ephemeral port unless `port` is given), in a thread.
    Answers 200 to each POST, or `fail_next`'s status; `down()` closes the port."""

    def __init__(self, port: int = 0) -> None:
        self._lock = threading.Lock()
        self._posts: list[Post] = []
        self._failures: list[int] = []
        self._server: _HookServer | None = None
        self._thread: threading.Thread | None = None
        self.port = port
        self.up()

    # The URL Apprise posts JSON to: json://host:port/path (jsons:// would be HTTPS).
    def apprise_url(self, path: str = "/hook", *, user: str = "", password: str = "", query: str = "") -> str:
        auth = ""
        if user or password:
            auth = quote(user, safe="") + (":" + quote(password, safe="") if password else "") + "@"
        return f"json://{auth}{LOOPBACK}:{self.port}{path}" + (f"?{query}" if query else "")

    @property
    def posts(self) -> list[Post]:
        with self._lock:
            return list(self._posts)

    def fail_next(self, count: int, status: int = 503) -> None:
        """The next `count` POSTs are answered with `status` (and recorded)."""
        with self._lock:
            self._failures.extend([status] * count)

    def down(self) -> None:
        """Stop listening: a connection to the port is refused, as to a host whose service is down."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=10)

    def up(self) -> None:
        if self._server is not None:
            return
        server = _HookServer((LOOPBACK, self.port), _HookHandler)
        server.receiver = self
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.name = f"json-receiver-{self.port}"
        self._thread.start()

    @property
    def is_up(self) -> bool:
        return self._server is not None

    def wait_for_posts(self, count: int, timeout: float = 30.0) -> list[Post]:
        wait_for(lambda: len(self.posts) >= count, timeout, message=f"{count} POST(s) at the JSON receiver")
        return self.posts

    def close(self) -> None:
        self.down()

    def __enter__(self) -> JsonReceiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _answer(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> int:
        with self._lock:
            status = self._failures.pop(0) if self._failures else 200
            self._posts.append(Post(path=path, headers=headers, body=body, raw=raw, status=status))
        return status


# --- SMTP -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mail:
    """One message as the SMTP receiver accepted it."""

    mail_from: str
    rcpt_tos: list[str]
    subject: str
    body: str  # the text/plain part (or the first part), decoded
    message: EmailMessage = field(repr=False)


class _Handler:
    def __init__(self, receiver: SmtpReceiver) -> None:
        self.receiver = receiver

    async def handle_DATA(self, server, session, envelope) -> str:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        part = message.get_body(preferencelist=("plain", "html"))
        body = part.get_content() if part is not None else ""
        mail = Mail(
            mail_from=envelope.mail_from,
            rcpt_tos=list(envelope.rcpt_tos),
            subject=str(message.get("Subject", "")),
            body=body,
            message=message,
        )
        with self.receiver._lock:
            self.receiver._messages.append(mail)
        return "250 Message accepted for delivery"


def _free_port() -> int:
    # aiosmtpd's Controller connects to its own port to know it is serving, so it needs the
    # number before it starts (port 0 would not do).
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


class SmtpReceiver:
    """A plain SMTP server on 127.0.0.1 (no TLS, no auth) that keeps every message it accepts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: list[Mail] = []
        self.port = _free_port()
        self._controller = Controller(_Handler(self), hostname=LOOPBACK, port=self.port, ready_timeout=10)
        self._controller.start()

    def apprise_url(self, *, to: str = "oncall@example.com", sender: str = "alerts@example.com") -> str:
        """mailto:// without TLS (`mode=insecure`: a plain local server) to `to`, from `sender`."""
        return f"mailto://{LOOPBACK}:{self.port}?mode=insecure&from={quote(sender)}&to={quote(to)}"

    @property
    def messages(self) -> list[Mail]:
        with self._lock:
            return list(self._messages)

    def wait_for_messages(self, count: int, timeout: float = 30.0) -> list[Mail]:
        wait_for(lambda: len(self.messages) >= count, timeout, message=f"{count} message(s) at the SMTP receiver")
        return self.messages

    def close(self) -> None:
        self._controller.stop()

    def __enter__(self) -> SmtpReceiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
