"""What a reading is asked for: the Selection, and the choices it is made of.

latency.forms builds it from request parameters; a Selection is validated
when made, so every reader can trust it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.utils.translation import gettext as _

from probes import metrics
from probes.readings.workload import CHOICES as WORKLOAD_CHOICES

WINDOWS = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
WINDOW_CHOICES = (*WINDOWS, "custom")
DEFAULT_WINDOW = "1h"
PERCENTILES = metrics.PERCENTILES
DEFAULT_PERCENTILE = "p50"
METRIC_CHOICES = tuple(m.name for m in metrics.SELECTABLE)
DEFAULT_METRIC = "ttft"
UNITS = {m.name: m.unit for m in metrics.SELECTABLE}
MAX_WINDOW = timedelta(days=400)
# Up to here raw rows are few enough to read directly (one target from 15
# regions makes ~7,000 of them in 6 h), and exact beats merged histograms.
RAW_MAX = timedelta(hours=6)
TPS = "tokens_per_s"


class BadParameter(ValueError):
    """A query parameter that cannot be used; .param names it."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param


def aware(when: datetime) -> datetime:
    # A naive time is taken as UTC, like probes.timeparse does for input.
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)


@dataclass
class Selection:
    """What to read. Empty target_ids / region_ids / probe_ids / outcomes
    mean all; [since, until) is half-open. probe_ids are honoured by every
    reader; outcomes by the regions.csv rows (buckets.py; outcomes are read
    from raw rows, since rollups count every outcome). workload: one of
    probes.engine.workloads, or empty for every workload (probes.readings.workload
    says how rows and rollups are narrowed to one)."""

    target_ids: list[int] = field(default_factory=list)
    region_ids: list[int] = field(default_factory=list)
    # Required, but after fields with defaults; None (a missing form field) is refused in __post_init__ with a
    # BadParameter, so every reader sees a datetime.
    since: datetime = None  # type: ignore[assignment]
    until: datetime = None  # type: ignore[assignment]
    metric: str = DEFAULT_METRIC
    percentile: float = 0.5
    # The preset the window came from ("custom" otherwise); it picks the
    # time-series bucket size.
    window: str = "custom"
    probe_ids: list[int] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    workload: str = ""

    def __post_init__(self) -> None:
        if self.since is None or self.until is None:
            raise BadParameter("since", _("since and until are required"))
        self.since = aware(self.since)
        self.until = aware(self.until)
        if self.since >= self.until:
            raise BadParameter("since", _("since must be before until"))
        if self.metric not in METRIC_CHOICES:
            raise BadParameter(
                "metric", _("metric must be one of %(choices)s") % {"choices": ", ".join(METRIC_CHOICES)}
            )
        if self.percentile not in PERCENTILES.values():
            raise BadParameter(
                "percentile", _("percentile must be one of %(choices)s") % {"choices": ", ".join(PERCENTILES)}
            )
        if self.window not in WINDOW_CHOICES:
            raise BadParameter(
                "window", _("window must be one of %(choices)s") % {"choices": ", ".join(WINDOW_CHOICES)}
            )
        if self.workload and self.workload not in WORKLOAD_CHOICES:
            raise BadParameter(
                "workload",
                _("workload must be one of %(choices)s") % {"choices": ", ".join(WORKLOAD_CHOICES)},
            )
        self.target_ids = list(self.target_ids)
        self.region_ids = list(self.region_ids)
        self.probe_ids = list(self.probe_ids)
        self.outcomes = list(self.outcomes)

    @property
    def percentile_label(self) -> str:
        return next(label for label, q in PERCENTILES.items() if q == self.percentile)

    @property
    def unit(self) -> str:
        return UNITS[self.metric]

    @property
    def raw_only(self) -> bool:
        """Read from raw rows alone, so every percentile is exact."""
        return self.until - self.since <= RAW_MAX
