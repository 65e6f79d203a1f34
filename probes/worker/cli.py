"""`latency-atlas`: what a region host runs.

    latency-atlas worker --region af-lagos [--concurrency N] [--loglevel L] [--hello-timeout S]
    latency-atlas version

No Django settings, no database: the broker URL, the region's credential and
the providers' keys come from the environment (deploy/region.env.example).
Before the Celery worker starts, each check prints one line and refuses to
start when it fails: exit status 78 for a configuration the central site or
this host refuses (systemd does not restart it: RestartPreventExitStatus=78),
69 when the broker cannot be reached (worth restarting). Then one line says
what it connected to, and the worker runs until SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import uuid
from collections.abc import Mapping

from probes.worker.config import EX_CONFIG, EX_UNAVAILABLE, ConfigError, WorkerConfig, load
from probes.worker.protocol import SCHEMA, region_queue, release

PROG = "latency-atlas"


def say(text: str) -> None:
    print(f"{PROG}: {text}", flush=True)


def refuse(text: str, code: int = EX_CONFIG) -> int:
    print(f"{PROG}: refusing to start: {text}", file=sys.stderr, flush=True)
    return code


def masked(url: str) -> str:
    """The broker URL as kombu prints it: the password replaced by **."""
    import kombu

    return kombu.Connection(url).as_uri()


def node_name(regions: tuple[str, ...], instance: str) -> str:
    """Unique per process (the measurements' `worker`, Celery's node name)."""
    label = regions[0] if len(regions) == 1 else f"{len(regions)}regions"
    return f"region-{label}-{instance[:6]}@{socket.gethostname()}"


def worker_argv(config: WorkerConfig, name: str) -> list[str]:
    return [
        "worker",
        "-Q",
        ",".join(region_queue(r) for r in config.regions),
        # Threads: each run waits on the shared probe event loop, so a thread
        # is cheap and N threads mean N probes in flight.
        "-P",
        "threads",
        "-c",
        str(config.concurrency),
        "-n",
        name,
        "-l",
        config.loglevel,
        "--without-gossip",
        "--without-mingle",
    ]


def _broker_error(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300] or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def run_worker(
    *,
    region: str | None,
    concurrency: int = 100,
    loglevel: str = "INFO",
    hello_timeout_s: float = 15.0,
    env: Mapping[str, str] | None = None,
) -> int:
    """Preflight, then the Celery worker. Returns the exit status."""
    try:
        config = load(
            region=region, concurrency=concurrency, loglevel=loglevel, hello_timeout_s=hello_timeout_s, env=env
        )
    except ConfigError as exc:
        return refuse(str(exc), exc.code)

    from celery import signals

    from probes.runtime import celery_health, hand_back_runs, health, install_engine
    from probes.worker import context
    from probes.worker.app import configure
    from probes.worker.heartbeat import Heartbeats

    try:
        # Answering from the start: /readyz says "not started" through the checks below.
        health.serve_from_env("consumer", os.environ if env is None else env)
    except health.HealthConfigError as exc:
        return refuse(str(exc))
    install_engine(config.probe_env)
    app = configure(config)
    # The consumer loop's beat for /readyz, and a stop on SIGTERM within the runner's timeout: a probe still in flight
    # after celery_health.HAND_BACK_S is cancelled and its run handed back to the broker, to be run by the next worker.
    celery_health.install(app, hand_back=hand_back_runs)
    broker = masked(config.broker_url)
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=2, interval_start=0.5, interval_step=0.5, interval_max=1, timeout=10)
    except Exception as exc:  # whatever the transport raises (refused, TLS, auth): one line, not a traceback
        return refuse(f"broker {broker} unreachable ({_broker_error(exc)})", EX_UNAVAILABLE)

    instance = uuid.uuid4().hex
    name = node_name(config.regions, instance)
    heartbeats = Heartbeats(app, config, name)
    context.install(config, name, heartbeats)
    try:
        answers = heartbeats.hello(config.hello_timeout_s)
    except Exception as exc:  # the broker went away between the two steps
        heartbeats.stop(final=False)
        return refuse(f"broker {broker} unreachable ({_broker_error(exc)})", EX_UNAVAILABLE)
    for slug, reply in answers.items():
        if reply is not None and not reply.ok:
            heartbeats.stop(final=False)
            return refuse(f"the central site refuses region {slug}: {reply.reason or 'no reason given'}")
        unbelieved = heartbeats.unbelieved.get(slug)
        if reply is None and unbelieved is not None:
            # An answer came but none this credential can believe: a credential of another site, or one
            # issued before the central key was rotated. Its run orders would all be refused as well.
            heartbeats.stop(final=False)
            return refuse(
                f"the answer to the starting heartbeat of region {slug} cannot be believed ({unbelieved}); "
                f"issue a new credential with `manage.py region_key {slug}` and set it"
            )
        offset = reply.clock_offset_ms if reply is not None else None
        # NTP's estimate is good to half the round trip (a heartbeat queued behind a busy or
        # starting ingest worker travels slowly one way): only a clock off by more than that is refused.
        slack = (reply.round_trip_ms or 0.0) / 2 if reply is not None else 0.0
        if offset is not None and abs(offset) - slack > config.max_clock_offset_ms:
            heartbeats.stop(final=False)
            return refuse(
                f"this host's clock is off by {offset / 1000:+.1f} s against the central site's "
                f"(more than LATENCY_MAX_CLOCK_OFFSET_MS={config.max_clock_offset_ms:g}): start times would be "
                "wrong by as much; synchronise the clock (NTP, e.g. systemd-timesyncd or chrony)"
            )
    for slug in config.regions:
        reply = answers[slug]
        credential = config.credentials[slug]
        if reply is None:
            say(
                f"warning: no answer to the starting heartbeat of region {slug} within "
                f"{config.hello_timeout_s:g} s (is the central ingest worker running?); starting anyway, "
                "results are still verified at ingest"
            )
            described, clock = slug, "clock offset unknown"
        else:
            info = reply.region or {}
            described = f"{slug} ({str(info.get('name') or slug)[:80]})"
            clock = f"clock offset {reply.clock_offset_ms:+.1f} ms" if reply.clock_offset_ms is not None else "clock ?"
        say(
            f"worker {name} connected: broker {broker}, region {described}, key {credential.key_id}, "
            f"release {release()} schema {SCHEMA}, {clock}, consuming {region_queue(slug)}"
        )

    def on_ready(**_kwargs) -> None:
        heartbeats.start()

    signals.worker_ready.connect(on_ready, weak=False)
    try:
        code = app.start(worker_argv(config, name))
    finally:
        heartbeats.stop(final=True)
    if heartbeats.refused:
        return EX_CONFIG
    return int(code or 0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Latency Atlas region worker.")
    commands = parser.add_subparsers(dest="command", required=True)
    worker = commands.add_parser("worker", help="run the probes of a region (or several, comma separated)")
    worker.add_argument(
        "--region", default=os.environ.get("LATENCY_REGION"), help="region slug, e.g. af-lagos (or LATENCY_REGION)"
    )
    worker.add_argument("--concurrency", type=int, default=100, help="probes in flight at once (default 100)")
    worker.add_argument("--loglevel", default="INFO")
    worker.add_argument(
        "--hello-timeout", type=float, default=15.0, help="seconds to wait for the central site's first answer"
    )
    commands.add_parser("version", help="print the release and the message schema")
    return parser


def main(argv: list[str] | None = None) -> None:
    opts = build_parser().parse_args(argv)
    if opts.command == "version":
        print(f"{PROG} {release()} (message schema {SCHEMA})")
        sys.exit(0)
    sys.exit(
        run_worker(
            region=opts.region,
            concurrency=opts.concurrency,
            loglevel=opts.loglevel,
            hello_timeout_s=opts.hello_timeout,
        )
    )


if __name__ == "__main__":
    main()
