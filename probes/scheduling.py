"""Which (probe, region) slots are due, and handing them to region queues.

Why a single dispatcher tick rather than django-celery-beat: beat entries
would have to be kept in sync with probes x regions on every admin change,
and a stale entry would keep firing. One tick per second reads the enabled
probes straight from the database (admin changes apply at the next tick),
computes each pair's current slot, and publishes it once. It runs inside
`celery beat` as a scheduler class, so beat still owns the broker
connection, reconnection, signals and the maintenance entries.

Slots are aligned to the epoch plus a per-probe offset, so restarts and
several schedulers agree on them. A Redis SET NX per slot stops a second
scheduler from publishing the same slot again; the measurement's unique key
(probe, region, scheduled_for) makes even a duplicate delivery record once.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import redis
from celery import beat
from django.conf import settings
from django.db import DatabaseError, close_old_connections

from probes import geo
from probes.runtime import health
from probes.slot_time import SLOT_LATE
from probes.worker.protocol import ORDER, SCHEMA, region_queue, release, seal_central

log = logging.getLogger(__name__)

RUN_TASK = "probes.run_slot"
SLOT_KEY = "latency:slot:{probe}:{region}:{slot}"
TICK_SECONDS = 1.0
# How long after a whole second the scheduler dispatches: past it, so the slot that begins there is due.
DISPATCH_AFTER_S = 0.002
# The scheduler publishes a slot this long before it begins, and the worker holds the order until the
# slot's moment: the time to read the probes, publish and deliver then falls before the start, not
# into it (bench/workers.py: on a busy machine that time is start jitter).
# (The worker's side: probes.worker.tasks.hold_until.)
LEAD_S = 1.0
# Room between the latest moment a worker may accept a run and the latest start the slot rule allows
# (probes.slot_time.SLOT_LATE): a worker takes a moment between accepting the order and starting the call, and
# its clock may be a little behind the scheduler's.
EXPIRY_MARGIN = timedelta(minutes=5)


def slot_offset(probe_id: int, interval: int) -> int:
    # Spread probes over their interval instead of firing all on the minute.
    return (probe_id * 7919) % interval


def current_slot(now_ts: float, interval: int, offset: int) -> int:
    """Start (epoch seconds) of the slot that contains now."""
    return int((now_ts - offset) // interval) * interval + offset


@dataclass(frozen=True)
class Slot:
    probe_id: int
    target_id: int
    region_id: int
    region_slug: str
    scheduled_for: datetime
    interval: int
    spec: dict

    def message(self) -> dict:
        """The run task's argument: small, and free of secrets (the spec names
        the environment variable that holds the key, never the key)."""
        return {
            # The region worker refuses an order of another schema (one log line naming both).
            "schema": SCHEMA,
            "release": release(),
            "probe_id": self.probe_id,
            "target_id": self.target_id,
            "region_id": self.region_id,
            "region": self.region_slug,
            "scheduled_for": self.scheduled_for.isoformat(),
            "interval": self.interval,
            "spec": self.spec,
        }


def region_spec(spec: dict, target, region) -> dict:
    """The spec as one region runs it: its own copy, since with emulated
    geography (every region on one machine, for the demo) each region pays
    its own delay to the target's hosting location (geo.DEFAULT_HOSTING for
    a target that names none), and says which region it stands for in a
    request header (geo.EMULATED_REGION_HEADER). Without the setting nothing
    is added."""
    spec = dict(spec)
    if settings.LATENCY_EMULATED_GEOGRAPHY:
        # A target that names no hosting location is placed at the stated default (the admin says so).
        latitude, longitude, _assumed = geo.emulated_hosting(target.latitude, target.longitude)
        rtt = geo.emulated_rtt_ms(region.latitude, region.longitude, latitude, longitude)
        spec["emulated_rtt_ms"] = round(rtt, 3)
        spec["emulated_jitter_ms"] = round(geo.emulated_jitter_ms(rtt), 3)
        spec["headers"] = {**(spec.get("headers") or {}), geo.EMULATED_REGION_HEADER: region.slug}
    else:
        spec["emulated_rtt_ms"] = 0.0
        spec["emulated_jitter_ms"] = 0.0
    return spec


def _current(now: datetime, lead_s: float = 0.0) -> list[tuple[int, int, datetime, int]]:
    """(probe id, region id, slot start, interval) of every enabled probe in every active region: one query of
    three columns, no model built (it runs every second, over every probe). With `lead_s`, also the slot
    that begins within that many seconds from now."""
    from probes.models import Probe

    now_ts = now.timestamp()
    pairs = Probe.regions.through.objects.filter(probe__enabled=True, region__active=True).values_list(
        "probe_id", "probe__interval_seconds", "region_id"
    )
    out = []
    for probe_id, interval_seconds, region_id in pairs:
        interval = int(interval_seconds)
        offset = slot_offset(probe_id, interval)
        start = current_slot(now_ts, interval, offset)
        out.append((probe_id, region_id, datetime.fromtimestamp(start, tz=UTC), interval))
        upcoming = current_slot(now_ts + lead_s, interval, offset)
        if upcoming != start:
            out.append((probe_id, region_id, datetime.fromtimestamp(upcoming, tz=UTC), interval))
    return out


def _slots(current: list[tuple[int, int, datetime, int]]) -> list[Slot]:
    """The Slots of these (probe id, region id, start, interval): the probes, targets and regions read once."""
    from probes.models import Probe

    wanted = Probe.objects.filter(id__in={c[0] for c in current})
    probes = {p.id: p for p in wanted.select_related("target").prefetch_related("regions")}
    specs: dict[int, dict] = {}
    slots = []
    for probe_id, region_id, when, interval in current:
        probe = probes.get(probe_id)
        region = next((r for r in probe.regions.all() if r.id == region_id), None) if probe else None
        if probe is None or region is None:  # removed between the two reads: not due any more
            continue
        if probe_id not in specs:
            specs[probe_id] = probe.spec().to_dict()
        spec = region_spec(specs[probe_id], probe.target, region)
        slots.append(Slot(probe.id, probe.target_id, region.id, region.slug, when, interval, spec))
    return slots


def due_slots(now: datetime) -> list[Slot]:
    """The current slot of every enabled probe in every active region."""
    return _slots(_current(now))


def order_expiry(slot: Slot, expires: datetime | None = None) -> datetime:
    """When a run order for the slot expires: `expires`, by default the slot's interval and the broker's
    visibility timeout after it (room for a redelivery), and never later than the slot rule allows a start: a run
    starting after that would be refused by ingest (and by the database's CHECK), so the order expires first and
    the slot is a missed run instead (probes.fleet.missed)."""
    if expires is None:
        expires = slot.scheduled_for + timedelta(seconds=slot.interval + settings.LATENCY_VISIBILITY_TIMEOUT + 30)
    return min(expires, slot.scheduled_for + SLOT_LATE - EXPIRY_MARGIN)


def signed_order(slot: Slot, expires: datetime) -> dict:
    """The run order as it travels: the slot's message and its expiry, signed with the central key(s) in force
    (probes.fleet.central, read once per process, not per order), so that a region worker runs only what the
    central site sent (probes.worker.orders)."""
    from probes.fleet.central import signers

    return seal_central(ORDER, slot.region_slug, signers(), {**slot.message(), "expires": expires.isoformat()})


def publish(app, slot: Slot, *, expires: datetime | None = None, producer=None) -> None:
    # A slot older than its interval is stale; the task itself tells a stale
    # first delivery (skipped: no burst after downtime) from a redelivery of
    # a run whose worker died (run: nothing lost). The expiry leaves room for
    # that redelivery, which Redis makes after the visibility timeout.
    expires = order_expiry(slot, expires)
    timeout = float(slot.spec["timeout_s"])
    app.send_task(
        RUN_TASK,
        args=[signed_order(slot, expires)],
        queue=region_queue(slot.region_slug),
        expires=expires,
        time_limit=timeout + 30,
        retry=True,
        retry_policy={"max_retries": 3, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 2},
        producer=producer,
    )


def dispatch_due(app, r: redis.Redis, now: datetime | None = None, *, lead_s: float = 0.0) -> int:
    """Publish every due slot not published yet (and, with `lead_s`, every slot beginning within that many
    seconds: the worker holds it until its moment). Returns how many.

    Every tick sees every probe's current slot, nearly all of them published already. So the tick reads
    only (probe, interval, region) ids, sets their once-per-slot keys in one pipelined round trip, and builds
    and publishes only the slots it won, in one batch (Redis: one pipelined LPUSH). Reading every probe whole,
    one key at a time, and one round trip per message made the last runs of a busy second start late
    (bench/workers.py)."""
    now = now or datetime.now(UTC)
    current = _current(now, lead_s)
    keys = [SLOT_KEY.format(probe=p, region=rg, slot=int(when.timestamp())) for p, rg, when, _i in current]
    if not keys:
        return 0
    with r.pipeline(transaction=False) as pipe:
        for key, (_p, _rg, _when, interval) in zip(keys, current, strict=True):
            pipe.set(key, "1", nx=True, ex=max(2 * interval, 60))
        won = pipe.execute()
    won_keys = [key for key, ok in zip(keys, won, strict=True) if ok]
    if not won_keys:
        return 0
    try:
        slots = _slots([entry for entry, ok in zip(current, won, strict=True) if ok])
        with app.producer_or_acquire() as producer, producer.batch(max_size=1000):
            for slot in slots:
                publish(app, slot, producer=producer)
    except Exception:
        # Let the next tick try again rather than lose the slots. (A batch that failed after a flush of
        # 1,000 of them publishes those again: run twice, stored once by the unique slot key.)
        r.delete(*won_keys)
        raise
    return len(slots)


def run_now(probe_ids: list[int]) -> int:
    """Queue an immediate run of each probe in each of its active regions."""
    from probes.celery_app import site_app
    from probes.models import Probe

    app = site_app()
    now = datetime.now(UTC)
    count = 0
    for probe in Probe.objects.filter(id__in=probe_ids).select_related("target").prefetch_related("regions"):
        spec = probe.spec().to_dict()
        for region in probe.regions.all():
            if not region.active:
                continue
            slot = Slot(
                probe.id,
                probe.target_id,
                region.id,
                region.slug,
                now,
                int(probe.interval_seconds),
                region_spec(spec, probe.target, region),
            )
            publish(app, slot)
            count += 1
    return count


class SlotScheduler(beat.Scheduler):
    """`celery beat -S probes.scheduling:SlotScheduler`: beat's own entries
    (rollups, pruning), signed as the central side's, plus the per-second
    slot dispatch."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._next_dispatch = 0.0
        self._redis = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=5)

    def apply_async(self, entry, producer=None, advance=True, **kwargs):
        # Maintenance tasks run only when sent from here: each message carries
        # a fresh central signature (probes.fleet.maintenance), made at send
        # time so it is never older than the entry's interval. The entry is
        # advanced first and only a copy carries the token: the schedule
        # itself never holds one.
        from probes.fleet.maintenance import MAINTENANCE_TASKS, central_token

        entry = self.reserve(entry) if advance else entry
        if entry.task in MAINTENANCE_TASKS:
            entry = type(entry)(
                name=entry.name,
                task=entry.task,
                last_run_at=entry.last_run_at,
                total_run_count=entry.total_run_count,
                schedule=entry.schedule,
                args=entry.args,
                kwargs={**(entry.kwargs or {}), "token": central_token(entry.task)},
                options=entry.options,
                app=entry.app,
            )
        return super().apply_async(entry, producer=producer, advance=False, **kwargs)

    def tick(self, *args, **kwargs):
        delay = super().tick(*args, **kwargs)
        wall = time.time()
        # Slots begin on whole seconds of the wall clock: dispatching just after each one, rather than at
        # whatever phase the process started in, keeps a run's start within milliseconds of its slot (an
        # unaligned tick made every run late by the same fraction of a second: bench/workers.py). A clock stepped back
        # by more than a tick re-aligns at once instead of waiting for the old second to come round.
        if wall >= self._next_dispatch or self._next_dispatch - wall > 2 * TICK_SECONDS:
            self._next_dispatch = math.floor(wall) + TICK_SECONDS + DISPATCH_AFTER_S
            self._dispatch()
        # The loop's heartbeat (/readyz, probes.runtime.health): a tick that does not come back stops it.
        health.beat()
        return min(delay, max(0.0, self._next_dispatch - time.time()))

    def _dispatch(self) -> None:
        close_old_connections()
        try:
            sent = dispatch_due(self.app, self._redis, lead_s=LEAD_S)
        except DatabaseError as exc:
            log.warning("scheduler: database unavailable, will retry: %s", exc)
            close_old_connections()
            return
        except redis.RedisError as exc:
            log.warning("scheduler: redis unavailable, will retry: %s", exc)
            return
        except Exception:
            log.exception("scheduler: dispatch failed, will retry")
            return
        if sent:
            log.info("scheduler: queued %d runs", sent)
