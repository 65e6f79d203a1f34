"""What the file holds: one typed row per object, in the order the file writes its fields.

A row is the same whether it was read from the database (export, and the "before" of a plan) or from a file
and cleaned by the admin's forms (the "after"): a plan is the difference of two rows, so a value the forms
normalise (a Gemini model taken from its URL, a percentile cleared for a rate metric) is compared as it will
be stored, and a second apply finds nothing to change.

Objects are named by keys that mean something to a person and survive a dump and restore: a region's slug, a
target's name, a channel's, an alert rule's, a model group's and an objective's name, a status page's slug, and a
probe's target and name together (Probe.name is unique only within its target: probe_unique_name_per_target).
Never a database id.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class RegionRow:
    slug: str
    name: str
    city: str
    country: str
    latitude: float
    longitude: float
    active: bool


@dataclass(frozen=True)
class TargetRow:
    name: str
    provider: str
    api_style: str
    url: str
    model: str
    api_key_env: str
    headers: dict[str, str]
    http_version: str
    ca_bundle: str
    location_name: str
    latitude: float | None
    longitude: float | None


@dataclass(frozen=True)
class ChannelRow:
    name: str
    enabled: bool
    # The name of the environment variable holding the Apprise URL at apply time; the URL never is in a file.
    url_env: str
    # The language of its notifications ("" for the site's): a file that left it out would reset it.
    language: str


@dataclass(frozen=True)
class ProbeRow:
    target: str
    name: str
    enabled: bool
    regions: tuple[str, ...]
    prompt: str
    max_tokens: int
    connection: str
    interval_seconds: int
    timeout_seconds: float
    workload: str


@dataclass(frozen=True)
class AlertRuleRow:
    name: str
    enabled: bool
    target: str | None  # None: every target
    metric: str
    percentile: str
    threshold_ms: float | None
    threshold_percent: float | None
    baseline_factor: float | None
    window_minutes: int
    min_samples: int
    min_regions: int
    min_regions_percent: float | None
    regions: tuple[str, ...]  # empty: every region
    channels: tuple[str, ...]


@dataclass(frozen=True)
class ModelGroupRow:
    name: str
    targets: tuple[str, ...]


@dataclass(frozen=True)
class ObjectiveRow:
    name: str
    enabled: bool
    targets: tuple[str, ...]  # or a model group, not both
    model_group: str | None
    regions: tuple[str, ...]  # empty: every region (or those of the mix)
    mix: dict[str, float]  # region slug to share
    ttft_threshold_ms: float
    tpot_threshold_ms: float | None
    total_threshold_ms: float | None
    degraded_ttft_threshold_ms: float | None
    objective_percent: float
    window: str
    exclude_silences: bool
    exclude_rate_limited: bool
    channels: tuple[str, ...]  # where its burn-rate alerts go, by channel name


@dataclass(frozen=True)
class StatusPageRow:
    slug: str
    title: str
    description: str
    language: str
    targets: tuple[str, ...]
    model_groups: tuple[str, ...]  # every target of these groups is shown too
    regions: tuple[str, ...]  # empty: every region
    slos: tuple[str, ...]  # the objectives a target's status comes from, by name
    show_latency: bool
    public: bool
    hostname: str  # a domain of its own, listed in ALLOWED_HOSTS; "" for /status/<slug>/ only


Row = RegionRow | TargetRow | ChannelRow | ProbeRow | AlertRuleRow | ModelGroupRow | ObjectiveRow | StatusPageRow


@dataclass(frozen=True)
class Kind:
    """One section of the file."""

    section: str  # the file's top-level key
    noun: str  # how plans and errors name one object
    row: type
    key: tuple[str, ...]  # the fields that name an object
    required: frozenset[str]  # fields a file must give; the others default as a new object in the admin does
    # Fields naming other objects: field -> the section of the objects they name.
    refs: tuple[tuple[str, str], ...] = ()

    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self.row))

    def key_of(self, row: Any) -> tuple[str, ...]:
        return tuple(getattr(row, name) for name in self.key)

    def label(self, key: tuple[str, ...]) -> str:
        # The admin's own way of naming a probe (Probe.__str__): "target / name".
        return f'{self.noun} "{" / ".join(key)}"'


REGIONS = Kind(
    "regions", "region", RegionRow, ("slug",), frozenset({"slug", "name", "city", "country", "latitude", "longitude"})
)
TARGETS = Kind("targets", "target", TargetRow, ("name",), frozenset({"name", "url"}))
CHANNELS = Kind("channels", "channel", ChannelRow, ("name",), frozenset({"name"}))
PROBES = Kind(
    "probes",
    "probe",
    ProbeRow,
    ("target", "name"),
    frozenset({"target", "name", "regions"}),
    refs=(("target", "targets"), ("regions", "regions")),
)
ALERT_RULES = Kind(
    "alert_rules",
    "alert rule",
    AlertRuleRow,
    ("name",),
    frozenset({"name", "metric"}),
    refs=(("target", "targets"), ("regions", "regions"), ("channels", "channels")),
)
MODEL_GROUPS = Kind(
    "model_groups", "model group", ModelGroupRow, ("name",), frozenset({"name"}), refs=(("targets", "targets"),)
)

OBJECTIVES = Kind(
    "objectives",
    "objective",
    ObjectiveRow,
    ("name",),
    frozenset({"name", "ttft_threshold_ms", "objective_percent"}),
    refs=(("targets", "targets"), ("model_group", "model_groups"), ("regions", "regions"), ("channels", "channels")),
)

STATUS_PAGES = Kind(
    "status_pages",
    "status page",
    StatusPageRow,
    ("slug",),
    frozenset({"slug", "title"}),
    refs=(("targets", "targets"), ("model_groups", "model_groups"), ("regions", "regions"), ("slos", "objectives")),
)

# The file's order, which is also the order objects are created in: what a row names comes before it.
KINDS: tuple[Kind, ...] = (REGIONS, TARGETS, CHANNELS, PROBES, ALERT_RULES, MODEL_GROUPS, OBJECTIVES, STATUS_PAGES)
BY_SECTION = {kind.section: kind for kind in KINDS}
FORMAT_VERSION = 1
