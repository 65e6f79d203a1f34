"""A region worker's heartbeat: how the central site knows it is there.

Every LATENCY_HEARTBEAT_SECONDS each region this process serves sends a
signed `heartbeat` (task probes.heartbeat, queue `health`) saying what it is
and what it does; the central site stores it (probes/fleet/heartbeats.py)
and answers on a reply queue of this process's own. The answer carries the
central clock, from which the clock offset is measured NTP-style, and says
whether the site still accepts the region's credential: a retired or wrong
one stops the worker (exit status 78) rather than let it run for nothing.

Replies are believed only when the central site signed them (a central key
the credential carries) for this region, this process and a beat it is
waiting on: anyone else on the broker can read a reply queue's name and
write to it, and must not be able to stop a worker. A reply or run order
refused is counted in the beats (refused_orders, refused_replies) and the
first of each kind is logged; a flood is one line.

One thread sends the beats and reads the replies, on its own broker
connection; the run counters are updated by the run task's threads.
"""

from __future__ import annotations

import logging
import platform
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import metadata

import kombu
from kombu.exceptions import OperationalError

from probes.worker.app import central_route
from probes.worker.config import EX_CONFIG, WorkerConfig
from probes.worker.protocol import (
    HEARTBEAT,
    REPLY,
    SCHEMA,
    Credential,
    Refused,
    open_central,
    region_queue,
    release,
    reply_queue,
    seal,
)

log = logging.getLogger("probes.worker.heartbeat")

HEARTBEAT_TASK = "probes.heartbeat"
HEALTH_QUEUE = "health"
# A beat not handled within this is of no use any more: the next one says more.
BEAT_EXPIRES_S = 30
# Reply queues outlive a dead worker by this long (RabbitMQ x-expires; on
# Redis an empty list is gone anyway, and a read renews the expiry).
REPLY_QUEUE_EXPIRES_S = 120
# The clock offset reported is that of the quickest of this many latest round trips.
CLOCK_SAMPLES = 8
# Replies older than this many beats are not matched any more.
PENDING_KEEP = 20


def engine_text() -> str:
    parts = [f"python {platform.python_version()}"]
    for dist in ("httpx", "httpcore", "anyio", "uvloop", "celery", "kombu"):
        try:
            parts.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            continue
    return " ".join(parts)[:200]


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


@dataclass
class RegionBeat:
    """One region served by this process: its credential, its own instance
    id (the central site keeps one Worker row per process and region), its
    counters and its latest clock measurement."""

    slug: str
    credential: Credential = field(repr=False)
    instance: str = field(default_factory=lambda: uuid.uuid4().hex)
    seq: int = 0
    in_flight: int = 0
    runs: int = 0
    last_run_at: datetime | None = None
    clock_offset_ms: float | None = None
    round_trip_ms: float | None = None
    region: dict | None = None  # {"id", "slug", "name"} from the central site's reply
    refused_orders: int = 0
    refused_replies: int = 0
    last_refusal: str | None = None
    samples: list[tuple[float, float]] = field(default_factory=list)  # (round trip, offset) in ms
    # seq -> (wall clock at sending, monotonic clock at sending)
    pending: dict[int, tuple[datetime, float]] = field(default_factory=dict)

    @property
    def reply_to(self) -> str:
        return reply_queue(self.slug, self.instance)


@dataclass(frozen=True)
class Reply:
    slug: str
    ok: bool
    reason: str | None
    region: dict | None
    clock_offset_ms: float | None
    round_trip_ms: float | None


class Heartbeats:
    def __init__(self, app, config: WorkerConfig, name: str) -> None:
        self.app = app
        self.config = config
        self.name = name
        self.hostname = socket.gethostname()
        self.engine = engine_text()
        self.started_at = datetime.now(UTC)
        self.regions = {slug: RegionBeat(slug, config.credentials[slug]) for slug in config.regions}
        self.refused: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: kombu.Connection | None = None
        self._consumers: list[kombu.Consumer] = []
        self._replies: list[Reply] = []
        self._unanswered = 0
        self._warned_publish = False
        # (what, why) of the refusals logged already: the first of each kind is said, the rest counted.
        self._logged: set[tuple[str, str]] = set()
        # The latest refused reply of each region while none was believed: why the hello may refuse to start.
        self.unbelieved: dict[str, Refused] = {}
        self._hello = False

    # --- counters, from the run task's threads --------------------------------

    def run_started(self, slug: str) -> None:
        with self._lock:
            beat = self.regions.get(slug)
            if beat is not None:
                beat.in_flight += 1

    def run_finished(self, slug: str) -> None:
        with self._lock:
            beat = self.regions.get(slug)
            if beat is not None:
                beat.in_flight = max(0, beat.in_flight - 1)
                beat.runs += 1
                beat.last_run_at = datetime.now(UTC)

    def note_refusal(self, what: str, where: str, refusal: Refused, *, slug: str | None = None) -> None:
        """An order or reply not run or believed (`what`: "order" or "reply") from queue `where`, counted for
        region `slug` (by default the region whose queue `where` is, else the first one served)."""
        slug = slug or where.removeprefix("probes.")
        if slug not in self.regions:
            slug = next(iter(self.regions))
        with self._lock:
            beat = self.regions[slug]
            if what == "order":
                beat.refused_orders += 1
            else:
                beat.refused_replies += 1
            beat.last_refusal = f"{what}: {str(refusal)[:290]}"
            # While the hello waits, a refusal is its own to report (in the one line refusing to start).
            first = not self._hello and (what, refusal.why) not in self._logged
            if first:
                self._logged.add((what, refusal.why))
        if first:
            noun = "a run order" if what == "order" else "a heartbeat reply"
            log.warning(
                "refused %s from %s: %s (the first %s refusal: later ones are counted in the heartbeat only)",
                noun,
                where,
                refusal,
                refusal.why,
            )

    # --- the broker side ------------------------------------------------------

    def _connection(self) -> kombu.Connection:
        if self._conn is None:
            self._conn = self.app.connection_for_write()
            self._conn.ensure_connection(max_retries=3, interval_start=0.5, interval_step=1, interval_max=2)
            channel = self._conn.default_channel
            # A consumer per region: its replies arrive on its own queue, so a
            # refusal that names no verified region is still matched to it.
            self._consumers = []
            for beat in self.regions.values():
                queue = kombu.Queue(
                    beat.reply_to,
                    routing_key=beat.reply_to,
                    durable=False,
                    auto_delete=True,
                    expires=REPLY_QUEUE_EXPIRES_S,
                )
                consumer = kombu.Consumer(
                    channel, queues=[queue], callbacks=[self._on_reply_for(beat)], accept=["json"], no_ack=True
                )
                consumer.consume()
                self._consumers.append(consumer)
        return self._conn

    def _drop_connection(self) -> None:
        conn, self._conn, self._consumers = self._conn, None, []
        if conn is not None:
            try:
                conn.release()
            except Exception as exc:  # a broken connection may fail to close: it is dropped either way
                log.debug("closing the heartbeat connection: %s", exc)

    def queue_depth(self, slug: str) -> int | None:
        """Messages waiting on the region's queue: a passive declare, which
        Redis and RabbitMQ both answer (on a channel of its own, since
        RabbitMQ closes a channel whose passive declare fails)."""
        conn = self._conn
        if conn is None:
            return None
        channel = None
        try:
            channel = conn.channel()
            return int(channel.queue_declare(queue=region_queue(slug), passive=True).message_count)
        except conn.channel_errors as exc:
            if self.config.scheme.startswith("redis"):
                # Redis keeps a queue as a list, and an empty list does not exist: "not found" is 0.
                return 0
            log.debug("queue depth of %s: %s", slug, exc)
            return None
        except Exception as exc:  # a queue not declared yet, or a broker hiccup: unknown, not zero
            log.debug("queue depth of %s: %s", slug, exc)
            return None
        finally:
            if channel is not None:
                try:
                    channel.close()
                except Exception as exc:  # already closed by the broker
                    log.debug("closing a channel: %s", exc)

    def content(self, beat: RegionBeat, state: str, sent_at: datetime, depth: int | None) -> dict:
        return {
            "instance": beat.instance,
            "name": self.name,
            "hostname": self.hostname,
            "release": release(),
            "schema": SCHEMA,
            "engine": self.engine,
            "state": state,
            "started_at": iso(self.started_at),
            "sent_at": iso(sent_at),
            "seq": beat.seq,
            "in_flight": beat.in_flight,
            "runs": beat.runs,
            "last_run_at": iso(beat.last_run_at),
            "queue_depth": depth,
            "clock_offset_ms": beat.clock_offset_ms,
            "round_trip_ms": beat.round_trip_ms,
            "reply_to": beat.reply_to,
            "refused_orders": beat.refused_orders,
            "refused_replies": beat.refused_replies,
            "last_refusal": beat.last_refusal,
        }

    def send(self, state: str) -> None:
        """One beat for every region served."""
        for beat in self.regions.values():
            depth = self.queue_depth(beat.slug)
            with self._lock:
                beat.seq += 1
                sent_at, sent_mono = datetime.now(UTC), time.monotonic()
                content = self.content(beat, state, sent_at, depth)
                beat.pending[beat.seq] = (sent_at, sent_mono)
                for old in [s for s in beat.pending if s <= beat.seq - PENDING_KEEP]:
                    del beat.pending[old]
            message = seal(HEARTBEAT, beat.slug, beat.credential, content)
            options: dict = {}
            if state == "running":
                # Not on the first and the last beat: a clock far behind would
                # make them expire on arrival, and the first one is how that is found.
                options["expires"] = BEAT_EXPIRES_S
            try:
                self.app.send_task(
                    HEARTBEAT_TASK,
                    args=[message],
                    **central_route(HEALTH_QUEUE),
                    retry=True,
                    retry_policy={"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 1},
                    **options,
                )
                self._warned_publish = False
            except OperationalError as exc:
                if not self._warned_publish:
                    log.warning("could not send a heartbeat (will keep trying): %s", exc)
                    self._warned_publish = True

    def _on_reply_for(self, beat: RegionBeat):
        def on_reply(body, message) -> None:
            reply = self._read_reply(beat, body, time.monotonic())
            if reply is not None:
                self._replies.append(reply)

        return on_reply

    def _read_reply(self, beat: RegionBeat, body: object, seen_mono: float) -> Reply | None:
        try:
            content = self._believe(beat, body)
        except Refused as exc:
            self.note_refusal("reply", beat.reply_to, exc, slug=beat.slug)
            self.unbelieved[beat.slug] = exc
            return None
        ok = content.get("ok") is True
        reason = content.get("reason") if isinstance(content.get("reason"), str) else None
        region = content.get("region") if isinstance(content.get("region"), dict) else None
        offset = rtt = None
        t1, t2 = parse_time(content.get("received_at")), parse_time(content.get("replied_at"))
        with self._lock:
            sent = beat.pending.pop(content["seq"], None)
            if sent is not None and t1 is not None and t2 is not None:
                t0, mono0 = sent
                elapsed = seen_mono - mono0  # monotonic: a clock step mid-flight does not count
                t3 = t0 + timedelta(seconds=elapsed)
                central_ms = (t2 - t1).total_seconds() * 1000
                rtt = max(0.0, elapsed * 1000 - central_ms)
                # NTP's offset is central minus worker; the Worker row keeps worker minus central.
                theta = ((t1 - t0) + (t2 - t3)).total_seconds() * 1000 / 2
                offset = round(-theta, 3)
                # NTP's clock filter: the sample with the shortest round trip of the last few is the
                # one least skewed by a one-way wait (a beat queued behind the ingest's batches).
                beat.samples.append((rtt, offset))
                del beat.samples[:-CLOCK_SAMPLES]
                best_rtt, best_offset = min(beat.samples)
                beat.clock_offset_ms, beat.round_trip_ms = best_offset, round(best_rtt, 3)
            if ok and region is not None:
                beat.region = region
        return Reply(beat.slug, ok, reason, region, offset, rtt)

    def _believe(self, beat: RegionBeat, body: object) -> dict:
        """The content of a reply the central site signed for this region,
        this process and a beat still waiting for its answer; Refused otherwise."""
        if isinstance(body, dict) and body.get("schema") != SCHEMA:
            theirs = f"schema {str(body.get('schema'))[:20]} (release {str(body.get('release'))[:40]})"
            raise Refused(
                f"the central site speaks message {theirs}; this worker speaks schema {SCHEMA} "
                f"(release {release()}): run the same release on both",
                why="schema",
            )
        region, content = open_central(body, REPLY, beat.credential.central_keys())
        if region != beat.slug or not isinstance(content, dict) or content.get("instance") != beat.instance:
            raise Refused(f"a signed reply addressed to another worker (region {region})", why="misaddressed")
        seq = content.get("seq")
        with self._lock:
            waiting = isinstance(seq, int) and not isinstance(seq, bool) and seq in beat.pending
        if not waiting:
            raise Refused(f"a signed reply to beat {str(seq)[:20]}, which is not waiting for one", why="replayed")
        return content

    def _drain(self, deadline: float) -> None:
        conn = self._connection()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                conn.drain_events(timeout=min(left, 1.0))
            except TimeoutError:  # socket.timeout too: nothing arrived in time
                continue

    # --- start-up: the first beat and its answer --------------------------------

    def hello(self, timeout: float) -> dict[str, Reply | None]:
        """Send a `starting` beat for each region and wait for each answer."""
        self._connection()
        self.send("starting")
        answers: dict[str, Reply | None] = dict.fromkeys(self.regions)
        deadline = time.monotonic() + timeout
        self._hello = True
        try:
            # Until an answer it can believe, or the deadline: a reply it cannot believe may be anyone's.
            while time.monotonic() < deadline and any(a is None for a in answers.values()):
                self._drain(min(deadline, time.monotonic() + 0.5))
                while self._replies:
                    reply = self._replies.pop(0)
                    if answers.get(reply.slug) is None:
                        answers[reply.slug] = reply
        finally:
            self._hello = False
        return answers

    # --- while the worker runs ----------------------------------------------------

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        next_beat = time.monotonic() + self.config.heartbeat_s
        while not self._stop.is_set():
            try:
                if time.monotonic() >= next_beat:
                    next_beat = max(next_beat + self.config.heartbeat_s, time.monotonic())
                    self._unanswered += 1
                    self.send("running")
                self._drain(min(next_beat, time.monotonic() + 1.0))
                self._handle_replies()
            except Exception as exc:  # the broker went away: reconnect at the next beat, never die
                log.warning("heartbeat: %s: %s (reconnecting)", type(exc).__name__, str(exc)[:200])
                self._drop_connection()
                self._stop.wait(min(self.config.heartbeat_s, 5))
            if self._unanswered == 12:
                log.warning(
                    "no heartbeat reply for %d beats: is the central ingest worker running (queue %s)?",
                    self._unanswered,
                    HEALTH_QUEUE,
                )

    def _handle_replies(self) -> None:
        while self._replies:
            reply = self._replies.pop(0)
            self._unanswered = 0
            if not reply.ok and self.refused is None:
                self.refused = f"region {reply.slug}: {reply.reason or 'refused by the central site'}"
                log.error("the central site refuses this worker: %s; stopping (exit status %d)", self.refused, 78)
                from celery.worker import state

                # The worker's own loop checks this and shuts down warmly (running probes finish).
                state.should_stop = EX_CONFIG

    def stop(self, *, final: bool = True) -> None:
        """Stop beating; the last beat says `stopped` (no reply is asked for)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if final:
            try:
                self._connection()
                self.send("stopped")
            except Exception as exc:  # the broker is gone: the central site will see the silence
                log.warning("could not send the last heartbeat: %s", str(exc)[:200])
        self._drop_connection()
