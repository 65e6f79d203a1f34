"""factory_boy factories for probes.models: the one place that knows what a
valid Region, Target, Probe and Measurement look like, so a test states only
the fields it cares about (`ProbeFactory(regions=[lagos])`,
`MeasurementFactory.build(probe=p, region=r, ttft_ms=None)`)."""

from __future__ import annotations

import math
import random
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import factory
from factory.django import DjangoModelFactory

from probes.alerts.secrets import encrypt_url, service_of
from probes.models import (
    AlertRule,
    HourlyRollup,
    Incident,
    IncidentEvent,
    Measurement,
    MissedRun,
    ModelGroup,
    NotificationChannel,
    Probe,
    Region,
    RegionKey,
    Silence,
    Target,
    Worker,
)
from probes.worker.protocol import RESULTS, Credential, seal


class RegionFactory(DjangoModelFactory):
    class Meta:
        model = Region

    slug = factory.Sequence(lambda n: f"test-region-{n}")
    name = factory.Sequence(lambda n: f"Test region {n}")
    city = "Testville"
    country = "ZZ"
    latitude = 0.0
    longitude = 0.0


class TargetFactory(DjangoModelFactory):
    class Meta:
        model = Target

    name = factory.Sequence(lambda n: f"Test target {n}")
    api_style = "openai"
    # Port 9 (discard): nothing answers, so a test that forgets to point the
    # target at the mock server fails rather than reaching the internet.
    url = "http://127.0.0.1:9/v1/chat/completions"
    model = "test-model"
    api_key_env = "TEST_API_KEY"


class ProbeFactory(DjangoModelFactory):
    class Meta:
        model = Probe
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"Test probe {n}")
    target = factory.SubFactory(TargetFactory)
    interval_seconds = 60
    timeout_seconds = 30.0

    @factory.post_generation
    def regions(self, create, extracted, **kwargs):
        """regions=[...] to run from; a fresh test region when omitted."""
        if not create:
            return
        self.regions.set(extracted if extracted is not None else [RegionFactory()])


class ModelGroupFactory(DjangoModelFactory):
    """A model group; targets=[...] to hold (none when omitted)."""

    class Meta:
        model = ModelGroup
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"Test model {n}")

    @factory.post_generation
    def targets(self, create, extracted, **kwargs):
        if create and extracted:
            self.targets.set(extracted)


class MeasurementFactory(DjangoModelFactory):
    """One successful measurement with every phase present and plausible
    (dns < connect < tls < ttfb < ttft < total). Use .build() and
    Measurement.objects.bulk_create for many rows."""

    class Meta:
        model = Measurement

    probe = factory.SubFactory(ProbeFactory)
    target = factory.LazyAttribute(lambda m: m.probe.target)
    region = factory.SubFactory(RegionFactory)
    # Either time alone names both (probes.slot_time: a run starts at its slot); _adjust_kwargs fills the other.
    scheduled_for = None
    started_at = None
    worker = "w"
    outcome = "ok"
    connection = "cold"
    http_status = 200
    dns_ms = 2.0
    connect_ms = 10.0
    tls_ms = 20.0
    ttfb_ms = 100.0
    ttft_ms = 150.0
    ttfat_ms = 160.0
    total_ms = 400.0
    output_tokens = 20
    tokens_per_s = 50.0
    itl_p50_ms = 12.5

    @classmethod
    def _adjust_kwargs(cls, **kwargs):
        slot, started = kwargs.get("scheduled_for"), kwargs.get("started_at")
        if slot is None and started is None:
            slot = started = datetime.now(UTC)
        kwargs["scheduled_for"] = started if slot is None else slot
        kwargs["started_at"] = slot if started is None else started
        return kwargs

    @classmethod
    def build_rows(cls, rows: Iterable[dict], **common) -> list[Measurement]:
        """Unsaved rows for bulk_create, many at once: the factory works out its declarations and `common` once,
        and each dict of `rows` sets its own columns (by field or attribute name: probe_id, region_id; a row's
        scheduled_for names its started_at too, as one built alone would). Thousands of rows in a test's data
        otherwise spend more time in the factory than in the database."""
        base = cls.build(**common)
        defaults = {f.attname: getattr(base, f.attname) for f in Measurement._meta.concrete_fields if not f.primary_key}
        built = []
        for row in rows:
            values = {**defaults, **row}
            if "started_at" not in row and "scheduled_for" in row:
                values["started_at"] = row["scheduled_for"]
            if "scheduled_for" not in row and "started_at" in row:
                values["scheduled_for"] = row["started_at"]
            built.append(Measurement(**values))
        return built


class HourlyRollupFactory(DjangoModelFactory):
    """One probe's rollup of one hour from its (first) region, with no histograms unless given (as
    Histogram.to_sparse's dicts, which the ORM stores packed)."""

    class Meta:
        model = HourlyRollup

    probe = factory.SubFactory(ProbeFactory)
    target = factory.LazyAttribute(lambda r: r.probe.target)
    region = factory.LazyAttribute(lambda r: r.probe.regions.order_by("id").first())
    hour = datetime(2026, 3, 1, 12, tzinfo=UTC)
    samples = 1


class RegionKeyFactory(DjangoModelFactory):
    """A region's public key as stored (no private half exists for it: use
    probes.fleet.keys.issue_key when a test must sign)."""

    class Meta:
        model = RegionKey

    region = factory.SubFactory(RegionFactory)
    key_id = factory.Sequence(lambda n: f"{n:016x}")
    public_key = factory.Sequence(lambda n: f"{n:043d}")
    created_at = factory.LazyFunction(lambda: datetime.now(UTC))


class WorkerFactory(DjangoModelFactory):
    """A running region worker whose latest heartbeat is `last_seen` (now unless given)."""

    class Meta:
        model = Worker

    instance = factory.LazyFunction(lambda: uuid.uuid4().hex)
    region = factory.SubFactory(RegionFactory)
    key_id = factory.Sequence(lambda n: f"{n:016x}")
    name = factory.Sequence(lambda n: f"celery@region-host-{n}")
    hostname = factory.Sequence(lambda n: f"region-host-{n}")
    release = "0.2.0"
    schema = 2
    engine = "python 3.11 httpx 0.28.1"
    state = Worker.RUNNING
    last_seen = factory.LazyFunction(lambda: datetime.now(UTC))
    started_at = factory.SelfAttribute("last_seen")
    in_flight = 0
    queue_depth = 0
    clock_offset_ms = 3.0
    round_trip_ms = 1.0


class MissedRunFactory(DjangoModelFactory):
    class Meta:
        model = MissedRun

    probe = factory.SubFactory(ProbeFactory)
    target = factory.LazyAttribute(lambda m: m.probe.target)
    region = factory.SubFactory(RegionFactory)
    scheduled_for = factory.LazyFunction(lambda: datetime.now(UTC))
    recorded_at = factory.LazyFunction(lambda: datetime.now(UTC))


class NotificationChannelFactory(DjangoModelFactory):
    """A channel to `url` (an Apprise URL; stored encrypted as the admin stores it). The default
    points at port 9 on loopback, where nothing answers."""

    class Meta:
        model = NotificationChannel
        exclude = ("url",)

    name = factory.Sequence(lambda n: f"Test channel {n}")
    url = "json://127.0.0.1:9/hook"
    apprise_url = factory.LazyAttribute(lambda c: encrypt_url(c.url))
    service = factory.LazyAttribute(lambda c: service_of(c.url))


class AlertRuleFactory(DjangoModelFactory):
    """TTFT p95 above 1 s for 10 minutes in one region with 5 samples (rules.refusals accepts it)."""

    class Meta:
        model = AlertRule
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"Test rule {n}")
    target = None
    metric = "ttft"
    percentile = "p95"
    threshold_ms = 1000.0
    window_minutes = 10
    min_samples = 5
    min_regions = 1

    @factory.post_generation
    def regions(self, create, extracted, **kwargs):
        if create and extracted:
            self.regions.set(extracted)

    @factory.post_generation
    def channels(self, create, extracted, **kwargs):
        if create and extracted:
            self.channels.set(extracted)


class IncidentFactory(DjangoModelFactory):
    """An open regional incident of a TTFT rule (its regions: regions=[...])."""

    class Meta:
        model = Incident
        skip_postgeneration_save = True

    rule = factory.SubFactory(AlertRuleFactory)
    target = factory.SubFactory(TargetFactory)
    started_at = factory.LazyFunction(lambda: datetime.now(UTC) - timedelta(minutes=20))
    opened_at = factory.LazyFunction(lambda: datetime.now(UTC) - timedelta(minutes=10))
    scope = "regional"
    measured_regions = 3
    summary = "TTFT p95 from Test region to Test target is 2.1 s (threshold 1 s) for 10 min."
    phase = "server_wait"
    peak_value = 2100.0
    baseline_value = 800.0

    @factory.post_generation
    def regions(self, create, extracted, **kwargs):
        if create and extracted:
            self.regions.set(extracted)


class IncidentEventFactory(DjangoModelFactory):
    class Meta:
        model = IncidentEvent

    incident = factory.SubFactory(IncidentFactory)
    at = factory.LazyFunction(lambda: datetime.now(UTC))
    kind = IncidentEvent.OPENED


class SilenceFactory(DjangoModelFactory):
    """A silence of `target` from an hour ago to an hour ahead."""

    class Meta:
        model = Silence

    target = factory.SubFactory(TargetFactory)
    starts_at = factory.LazyFunction(lambda: datetime.now(UTC) - timedelta(hours=1))
    ends_at = factory.LazyFunction(lambda: datetime.now(UTC) + timedelta(hours=1))
    reason = "planned maintenance"


def measurement_payload(probe, region, scheduled_for: datetime, **result_fields) -> dict:
    """One measurement as a region worker's run task builds it (a sealed
    results message carries a list of these: `sealed_results`)."""
    from probes.engine.result import Measurement as EngineResult

    result = EngineResult(
        outcome="ok",
        started_at=(scheduled_for + timedelta(milliseconds=250)).isoformat(),
        http_status=200,
        http_version="HTTP/1.1",
        remote_addr="203.0.113.7:443",
        connection="warm",
        ttfb_ms=120.5,
        first_event_ms=180.25,
        ttft_ms=250.123456,
        total_ms=900.000001,
        output_tokens=5,
        tokens_estimated=False,
        tokens_per_s=33.333333,
        itl_p50_ms=12.5,
        itl_p95_ms=19.75,
        itl_max_ms=22.0,
        response_bytes=1234,
    ).to_dict()
    result.update(result_fields)
    return {
        "probe_id": probe.id,
        "target_id": probe.target_id,
        "region_id": region.id,
        "scheduled_for": scheduled_for.isoformat(),
        "worker": "worker-lagos-1",
        "result": result,
    }


def region_credential(region: Region, **issue) -> Credential:
    """A new credential for `region`, issued as `manage.py region_key` issues
    one (probes.fleet.keys.issue_key: the region's earlier keys keep working
    for the overlap, 24 h unless `overlap=` says otherwise)."""
    from probes.fleet.keys import issue_key

    return Credential.parse(issue_key(region, **issue).credential)


def sealed_results(region: Region, payloads: list, credential: Credential | None = None, *, slug: str = "") -> dict:
    """The one argument of an ingest task message, as a region worker sends
    it: `payloads` sealed with `credential` (a new one of `region` when
    omitted) for `region` (or for the region named `slug`: a forgery)."""
    return seal(RESULTS, slug or region.slug, credential or region_credential(region), list(payloads))


def region_keys(region: Region) -> list[RegionKey]:
    return list(RegionKey.objects.filter(region=region).order_by("created_at"))


# The timing columns a failed row leaves NULL: it has no answer to time.
TIMINGS = ("dns_ms", "connect_ms", "tls_ms", "ttfb_ms", "ttft_ms", "ttfat_ms", "total_ms", "tokens_per_s")


def spread_measurements(
    probe, region, start: datetime, end: datetime, count: int, *, seed: int, median=300.0, fail_every=0, **fixed
) -> list[Measurement]:
    """Store `count` measurements spread evenly over [start, end), with
    random but repeatable (seeded) phases whose TTFT has the given median;
    every `fail_every`-th one a timeout without timings. `fixed` pins
    columns (e.g. connect_ms=130.0, or total_ms for the failed rows too)."""
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        started = start + (end - start) * (i / count)
        failed = bool(fail_every) and i % fail_every == fail_every - 1
        dns = rng.uniform(1, 20)
        connect = rng.uniform(20, 60)
        tls = connect * 2
        ttfb = dns + connect + tls + rng.lognormvariate(math.log(200), 0.3)
        ttft = ttfb + rng.lognormvariate(math.log(median), 0.5)
        values = {
            "dns_ms": dns,
            "connect_ms": connect,
            "tls_ms": tls,
            "ttfb_ms": ttfb,
            "ttft_ms": ttft,
            "ttfat_ms": ttft + 3,
            "total_ms": ttft + rng.uniform(500, 2000),
            "tokens_per_s": rng.uniform(20, 90),
        }
        if failed:
            values = dict.fromkeys(TIMINGS)
        elif fixed:
            values.update(fixed)
        rows.append({"scheduled_for": started, "outcome": "timeout" if failed else "ok", **values})
    built = MeasurementFactory.build_rows(
        rows, probe=probe, region=region, http_status=None, output_tokens=None, itl_p50_ms=None
    )
    return Measurement.objects.bulk_create(built)


class IngestSourceFactory(DjangoModelFactory):
    """An enabled ingest source; its secret token is on the instance as `.token` (only its hash is stored)."""

    class Meta:
        model = "probes.IngestSource"

    name = factory.Sequence(lambda n: f"app-{n}")
    allowed_origins = factory.LazyFunction(list)

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        from probes.realusers.sources import create_source

        name = kwargs.pop("name")
        origins = kwargs.pop("allowed_origins")
        source, token = create_source(name, origins, **kwargs)
        source.token = token
        return source


class ObservationFactory(DjangoModelFactory):
    """One stored real-user call; rollups are not touched (use probes.realusers.store.record for both)."""

    class Meta:
        model = "probes.Observation"

    source = factory.SubFactory(IngestSourceFactory)
    kind = "span"
    observed_at = factory.LazyFunction(lambda: datetime.now(UTC))
    received_at = factory.LazyFunction(lambda: datetime.now(UTC))
    model = "gpt-4o"
    host = "api.openai.com"
    country = "NG"
    city = "Lagos"
    latitude = 6.45
    longitude = 3.4
    place_from = "attributes"
    ttft_ms = 900.0
    total_ms = 2000.0


class ServiceLevelObjectiveFactory(DjangoModelFactory):
    """An objective over targets=[...] (one new target when omitted), or model_group=...; regions=[...] to
    restrict it (every region when omitted)."""

    class Meta:
        model = "probes.ServiceLevelObjective"
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"Test objective {n}")
    ttft_threshold_ms = 800.0
    objective_percent = 99.0
    window = "rolling_30d"

    @factory.post_generation
    def targets(self, create, extracted, **kwargs):
        if not create:
            return
        if extracted is not None:
            self.targets.set(extracted)
        elif self.model_group_id is None:
            self.targets.set([TargetFactory()])

    @factory.post_generation
    def regions(self, create, extracted, **kwargs):
        if create and extracted:
            self.regions.set(extracted)

    @factory.post_generation
    def channels(self, create, extracted, **kwargs):
        if create and extracted:
            self.channels.set(extracted)


class SLOFiveMinuteCountFactory(DjangoModelFactory):
    """Five minutes' counts, as the counter writes them for the last hours (alone: the tests that make them look
    at what the counter keeps, not at readings)."""

    class Meta:
        model = "probes.SLOFiveMinuteCount"


class SLOHourCountFactory(DjangoModelFactory):
    """One hour's counts, added to its day's counts too, as ingest writes them (readers take whole days there)."""

    class Meta:
        model = "probes.SLOHourCount"

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        from django.db.models import F

        from probes.models import SLODayCount

        row = super()._create(model_class, *args, **kwargs)
        numbers = {f: getattr(row, f) for f in ("good", "degraded", "bad", "missed", "excluded")}
        day = row.hour.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        key = {"objective_id": row.objective_id, "target_id": row.target_id, "region_id": row.region_id, "day": day}
        if not SLODayCount.objects.filter(**key).update(**{f: F(f) + n for f, n in numbers.items()}):
            SLODayCount.objects.create(**key, **numbers)
        return row

    objective = factory.SubFactory(ServiceLevelObjectiveFactory)
    target = factory.SubFactory(TargetFactory)
    region = factory.SubFactory(RegionFactory)
    hour = factory.LazyFunction(lambda: datetime.now(UTC).replace(minute=0, second=0, microsecond=0))
    good = 90
    degraded = 5
    bad = 10


class StatusPageFactory(DjangoModelFactory):
    """A public status page of targets=[...], slos=[...], regions=[...] (each empty when omitted)."""

    class Meta:
        model = "probes.StatusPage"
        skip_postgeneration_save = True

    slug = factory.Sequence(lambda n: f"status-{n}")
    title = factory.Sequence(lambda n: f"Status {n}")
    public = True

    @factory.post_generation
    def targets(self, create, extracted, **kwargs):
        if create and extracted:
            self.targets.set(extracted)

    @factory.post_generation
    def model_groups(self, create, extracted, **kwargs):
        if create and extracted:
            self.model_groups.set(extracted)

    @factory.post_generation
    def regions(self, create, extracted, **kwargs):
        if create and extracted:
            self.regions.set(extracted)

    @factory.post_generation
    def slos(self, create, extracted, **kwargs):
        if create and extracted:
            self.slos.set(extracted)


class IncidentUpdateFactory(DjangoModelFactory):
    class Meta:
        model = "probes.IncidentUpdate"

    incident = factory.SubFactory(IncidentFactory)
    status = "investigating"
    text = "We are looking into slow first tokens."
    posted_at = factory.LazyFunction(lambda: datetime.now(UTC))
