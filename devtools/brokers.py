"""Brokers as a region host meets them, for the end-to-end tests and the benchmarks: a Redis over TLS
with a password (Debian's redis-server and a throwaway trustme CA), and a RabbitMQ virtual host with a
user for the central side and one per region whose permissions are the ones docs/guides/add-a-region.md documents.

Each is made for one run and removed after it; neither touches anything it did not create (the RabbitMQ
server is the machine's, so only a vhost and users with random names are added to it, then deleted).
"""

from __future__ import annotations

import secrets
import shutil
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from devtools.embedded import free_port

REDIS_SERVER = "/usr/bin/redis-server"
RABBITMQCTL = "rabbitmqctl"


class Unavailable(Exception):
    """The broker cannot be had on this machine; the message says why (a test skips with it)."""


# --- Redis over TLS ---------------------------------------------------------------------------------


@dataclass
class TlsRedis:
    """A redis-server listening only on TLS (127.0.0.1), with a password, its certificate signed by a CA
    made for this run. `url(db)` is a rediss:// URL with the password; `ca_path` the CA bundle to trust."""

    folder: Path
    port: int = 0
    password: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    ca_path: Path = field(init=False)
    _proc: subprocess.Popen | None = None

    def __post_init__(self) -> None:
        self.ca_path = self.folder / "ca.pem"

    def url(self, db: int = 0) -> str:
        return f"rediss://:{quote(self.password, safe='')}@127.0.0.1:{self.port}/{db}"

    def client(self, db: int = 0):
        import redis

        return redis.Redis(
            host="127.0.0.1",
            port=self.port,
            db=db,
            password=self.password,
            ssl=True,
            ssl_ca_certs=str(self.ca_path),
            socket_timeout=5,
        )

    def start(self) -> TlsRedis:
        import trustme

        if not Path(REDIS_SERVER).exists():
            raise Unavailable(f"{REDIS_SERVER} is not installed")
        self.folder.mkdir(parents=True, exist_ok=True)
        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1")
        ca.cert_pem.write_to_path(str(self.ca_path))
        cert.cert_chain_pems[0].write_to_path(str(self.folder / "server.crt"))
        cert.private_key_pem.write_to_path(str(self.folder / "server.key"))
        self.port = free_port()
        log = self.folder / "redis.log"
        # The password goes in a config file, not argv: ps shows argv to every local user.
        conf = self.folder / "redis.conf"
        conf.write_text(f'requirepass "{self.password}"\n')
        conf.chmod(0o600)
        self._proc = subprocess.Popen(
            [
                REDIS_SERVER,
                str(conf),
                "--bind",
                "127.0.0.1",
                "--port",
                "0",
                "--tls-port",
                str(self.port),
                "--tls-cert-file",
                str(self.folder / "server.crt"),
                "--tls-key-file",
                str(self.folder / "server.key"),
                "--tls-ca-cert-file",
                str(self.ca_path),
                "--tls-auth-clients",
                "no",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
                "--logfile",
                str(log),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while True:
            if self._proc.poll() is not None:
                said = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                if "tls" in said.lower() and ("not supported" in said.lower() or "bad directive" in said.lower()):
                    raise Unavailable(f"{REDIS_SERVER} was built without TLS: {said.strip()[-300:]}")
                raise RuntimeError(f"redis-server (TLS) exited with {self._proc.returncode}:\n{said}")
            try:
                if self.client().ping():
                    return self
            except Exception:  # not listening yet, or the handshake came too early
                if time.monotonic() > deadline:
                    self.stop()
                    raise
            time.sleep(0.1)

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=10)


# --- RabbitMQ ---------------------------------------------------------------------------------------


def region_permissions(slug: str) -> tuple[str, str, str]:
    """RabbitMQ permissions (configure, write, read) of a region's user: proved by
    tests/regions_e2e/test_rabbitmq_region_users_can_do_only_their_part.py and quoted in docs/guides/add-a-region.md.

    configure: its own queue `probes.SLUG` (and the exchange of that name Celery declares for it) and its
      workers' reply queues `probes.SLUG.reply.<32 hex>`: nothing of the central side's, so it cannot
      declare, purge or delete `ingest` or `health`.
    write: publish only to the central side's `ingest` and `health` exchanges (declared by the ingest worker),
      plus bind its own queues; not the default exchange, which routes to any queue (maintenance, other
      regions).
    read: consume only its own queue and reply queues."""
    own = rf"probes\.{slug}(\.reply\.[0-9a-f]{{32}})?"
    return f"^{own}$", f"^(ingest|health|{own})$", f"^{own}$"


@dataclass
class RabbitVhost:
    """A vhost of the machine's RabbitMQ (127.0.0.1:5672) with a central user of full rights in it and
    region users made by `add_region(slug)`. Everything is deleted by `remove()`."""

    host: str = "127.0.0.1"
    port: int = 5672
    vhost: str = field(default_factory=lambda: f"latency-e2e-{secrets.token_hex(4)}")
    central_user: str = field(default_factory=lambda: f"latency-e2e-central-{secrets.token_hex(4)}")
    central_password: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    region_users: dict[str, tuple[str, str]] = field(default_factory=dict)

    @staticmethod
    def ctl(*args: str, timeout: float = 60) -> str:
        done = subprocess.run([RABBITMQCTL, "-q", *args], capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"rabbitmqctl {args[0]} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
        return done.stdout

    @classmethod
    def check_available(cls, host: str = "127.0.0.1", port: int = 5672) -> None:
        if shutil.which(RABBITMQCTL) is None:
            raise Unavailable("rabbitmqctl is not installed")
        try:
            socket.create_connection((host, port), timeout=3).close()
        except OSError as exc:
            raise Unavailable(f"no RabbitMQ listening on {host}:{port} ({exc})") from None
        try:
            cls.ctl("status", timeout=30)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            raise Unavailable(f"rabbitmqctl cannot manage the server (run as root?): {exc}") from None

    def url(self, user: str, password: str) -> str:
        return f"amqp://{quote(user, safe='')}:{quote(password, safe='')}@{self.host}:{self.port}/{quote(self.vhost)}"

    @property
    def central_url(self) -> str:
        return self.url(self.central_user, self.central_password)

    def region_url(self, slug: str) -> str:
        return self.url(*self.region_users[slug])

    def create(self) -> RabbitVhost:
        # Each rabbitmqctl starts an Erlang node of its own (seconds on a busy machine): the independent calls
        # run side by side.
        with ThreadPoolExecutor() as pool:
            done = [pool.submit(self.ctl, "add_vhost", self.vhost)]
            done.append(pool.submit(self._add_user, self.central_user, self.central_password))
            for future in done:
                future.result()
        self.ctl("set_permissions", "-p", self.vhost, self.central_user, ".*", ".*", ".*")
        return self

    def add_region(self, slug: str) -> str:
        """A user for region `slug` with region_permissions(slug); its amqp:// URL."""
        user, password = f"latency-e2e-{slug}-{secrets.token_hex(3)}", secrets.token_urlsafe(18)
        self._add_user(user, password)
        self.region_users[slug] = (user, password)
        self.ctl("set_permissions", "-p", self.vhost, user, *region_permissions(slug))
        return self.region_url(slug)

    def _add_user(self, user: str, password: str) -> None:
        # The password on stdin (--silent reads it there), not argv, which ps shows.
        done = subprocess.run(
            [RABBITMQCTL, "-q", "add_user", user],
            input=password + "\n",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"rabbitmqctl add_user failed: {done.stderr.strip()[-500:]}")

    def queue_lengths(self) -> dict[str, int]:
        out = self.ctl("list_queues", "-p", self.vhost, "name", "messages", "--no-table-headers")
        return {name: int(n) for name, n in (line.split("\t") for line in out.splitlines() if "\t" in line)}

    def remove(self) -> None:
        calls = [("delete_user", user) for user in [self.central_user, *(u for u, _ in self.region_users.values())]]
        calls.append(("delete_vhost", self.vhost))
        errors = []
        with ThreadPoolExecutor() as pool:
            for future in [pool.submit(self.ctl, *call) for call in calls]:
                try:
                    future.result()
                except RuntimeError as exc:
                    errors.append(str(exc))
        if errors:
            raise RuntimeError("; ".join(errors))
