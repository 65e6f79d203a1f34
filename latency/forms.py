"""Query parameters as Django forms: the dashboard's filters, the exports'
filters and the live feed's target.

Every door (pages, JSON API, CSV exports, websocket) reads its input through
one of these forms and nothing else, so a parameter means the same thing
and is refused with the same message everywhere. A refusal names its
parameter (BadParameter.param, the "param" of a 400) and says what would be
accepted; the messages are part of the API and tests pin them.

Conventions shared by every field, since these are GET query strings typed
or bookmarked by people:
- blank values count as not given (a GET form sends `since=` for an
  untouched input);
- a parameter meant once and given twice is refused, not silently reduced
  to one of its values;
- repeatable parameters keep their order and drop repeats.

A bound form keeps what was typed, so a page can show a mistake in place
(DashboardFilterForm.selected) for the reader to correct.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

from django import forms
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.http import QueryDict
from django.utils.functional import cached_property
from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from latency.charts.over_time import OVER_TIME_FORMS
from probes import readings
from probes.engine.result import OUTCOMES
from probes.engine.workloads import WORKLOADS
from probes.exports import BUCKETS, DEFAULT_BUCKET, DEFAULT_RANGE, ExportFilters
from probes.exports.realusers import REAL_USER_BUCKETS
from probes.models import Probe, Region, Target
from probes.readings.selection import (
    DEFAULT_METRIC,
    DEFAULT_PERCENTILE,
    DEFAULT_WINDOW,
    MAX_WINDOW,
    METRIC_CHOICES,
    PERCENTILES,
    WINDOW_CHOICES,
    WINDOWS,
    BadParameter,
)
from probes.readings.selection import Selection as Filters
from probes.readings.workloads import MAX_WINDOW as MAX_WORKLOADS_WINDOW
from probes.timeparse import parse_when

MAP_LAYERS = ("synthetic", "real", "both")
DEFAULT_LAYER = "both"
# The "pool targets" checkbox's one value (a GET form sends pool=on when ticked, nothing otherwise).
POOL_CHOICES = ("on",)

# The largest id PostgreSQL's bigint holds: a longer number cannot name a row.
MAX_ID = 2**63 - 1


class Values(forms.Widget):
    """Every non-blank value given for a name, stripped, in order."""

    def value_from_datadict(self, data, files, name):
        if hasattr(data, "getlist"):
            raw = data.getlist(name)
        else:  # a plain mapping of name to a value or a list of values
            raw = data.get(name, [])
            raw = [raw] if isinstance(raw, str) else list(raw)
        return [v.strip() for v in raw if v is not None and v.strip()]

    def value_omitted_from_data(self, data, files, name):
        return name not in data


class Param(forms.Field):
    """A query parameter. The form tells each field its name (`param`),
    since the messages name the parameter."""

    widget = Values
    param = ""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)


class Once(Param):
    """At most one value; with choices, one of them (default when absent)."""

    def __init__(self, *, choices=(), default: str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.choices = tuple(choices)
        self.default = default

    def to_python(self, values):
        if len(values) > 1:
            raise ValidationError(_("%(param)s must be given once") % {"param": self.param})
        value = values[0] if values else self.default
        if value is not None and self.choices and value not in self.choices:
            raise ValidationError(
                _("%(param)s must be one of %(choices)s") % {"param": self.param, "choices": ", ".join(self.choices)}
            )
        return value


class Ids(Param):
    """Repeatable ids of existing rows of `model` (target, probe); empty, or
    "all" where allowed, means all."""

    def __init__(self, model, *, allow_all: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model = model
        self.allow_all = allow_all

    def to_python(self, texts) -> list[int]:
        if self.allow_all and "all" in texts:
            return []
        ids: list[int] = []
        for text in texts:
            if not (text.isascii() and text.isdigit()):
                message = (
                    _("%(param)s must be a %(param)s id or all, got %(value)s")
                    if self.allow_all
                    else _("%(param)s must be a %(param)s id, got %(value)s")
                )
                raise ValidationError(message % {"param": self.param, "value": repr(text)})
            if int(text) not in ids:
                ids.append(int(text))
        known = set(self.model.objects.filter(id__in=[i for i in ids if i <= MAX_ID]).values_list("id", flat=True))
        unknown = [str(i) for i in ids if i not in known]
        if unknown:
            raise ValidationError(_("unknown %(param)s id %(ids)s") % {"param": self.param, "ids": ", ".join(unknown)})
        return ids


class RegionSlugs(Param):
    """Repeatable slugs of existing regions, as region ids; empty, or "all"
    where allowed, means all."""

    def __init__(self, *, allow_all: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.allow_all = allow_all

    def to_python(self, slugs) -> list[int]:
        if self.allow_all and "all" in slugs:
            return []
        # A NUL names no region, and PostgreSQL refuses to be asked about one (a 500 otherwise).
        askable = [s for s in slugs if "\x00" not in s]
        by_slug = dict(Region.objects.filter(slug__in=askable).values_list("slug", "id"))
        unknown = [s for s in slugs if s not in by_slug]
        if unknown:
            raise ValidationError(
                _("unknown %(param)s %(slugs)s") % {"param": self.param, "slugs": ", ".join(repr(s) for s in unknown)}
            )
        return list(dict.fromkeys(by_slug[s] for s in slugs))


class MapTarget(Once):
    """The map's target when several are chosen: a target id, "best" (each region coloured by its best
    target), or absent (the best-ranked target, latency.per_target)."""

    def to_python(self, values):
        text = super().to_python(values)
        if text is None or text == "best":
            return text
        if not (text.isascii() and text.isdigit()) or int(text) > MAX_ID:
            raise ValidationError(
                _("%(param)s must be a target id or best, got %(value)s") % {"param": self.param, "value": repr(text)}
            )
        if not Target.objects.filter(id=int(text)).exists():
            raise ValidationError(_("unknown %(param)s id %(ids)s") % {"param": self.param, "ids": text})
        return int(text)


class Outcomes(forms.MultipleChoiceField):
    """Repeatable outcome names, without repeats."""

    widget = Values

    def __init__(self, **kwargs) -> None:
        super().__init__(
            choices=[(o, o) for o in OUTCOMES],
            required=False,
            # Lazy: the field is built once, at import; the message is read in each request's language.
            error_messages={
                "invalid_choice": format_lazy(
                    gettext_lazy("outcome must be one of {choices}, got %(value)r"), choices=", ".join(OUTCOMES)
                )
            },
            **kwargs,
        )

    def clean(self, value) -> list[str]:
        return list(dict.fromkeys(super().clean(value)))


class ParamsForm(forms.Form):
    """A form over query parameters, read at `now` (relative times)."""

    def __init__(self, data, *, now: datetime) -> None:
        super().__init__(data if data is not None else QueryDict())
        # A naive time is taken as UTC, as probes.timeparse does for input.
        self.now = (now if now.tzinfo else now.replace(tzinfo=UTC)).astimezone(UTC)
        for name, field in self.fields.items():
            field.param = name

    def typed(self, name: str) -> list[str]:
        """The non-blank values given for `name`, as typed."""
        return Values().value_from_datadict(self.data, None, name)

    def first_error(self) -> BadParameter | None:
        """The first refusal, as the BadParameter the views answer with."""
        if self.is_valid():
            return None
        name, errors = next(iter(self.errors.as_data().items()))
        return BadParameter(name, errors[0].messages[0])

    def when(self, name: str, text: str) -> datetime:
        """A time as typed (ISO 8601, or relative such as 24h) or a refusal naming `name`."""
        try:
            return parse_when(text, self.now)
        except ValueError as exc:
            # The parser's own words (probes.timeparse) quote what was typed.
            raise ValidationError(_("%(param)s: %(problem)s") % {"param": name, "problem": exc}) from None

    def result(self):
        """The cleaned filters, or BadParameter naming the first bad parameter."""
        if error := self.first_error():
            raise error
        return self.build()

    def build(self):
        raise NotImplementedError


class DashboardFilterForm(ParamsForm):
    """The dashboard's filters (pages and /api/*): target (ids, repeatable,
    or "all"), region (slugs, repeatable, or "all"), window (a preset, or
    custom with since and optional until), percentile, metric, workload
    (one of probes.engine.workloads; blank: every workload); and how the
    time series is drawn (over_time: heatmap or lines; absent, the chart
    decides from the number of regions chosen)."""

    target = Ids(Target, allow_all=True)
    region = RegionSlugs(allow_all=True)
    since = Once()
    until = Once()
    window = Once(choices=WINDOW_CHOICES)
    percentile = Once(choices=PERCENTILES, default=DEFAULT_PERCENTILE)
    metric = Once(choices=METRIC_CHOICES, default=DEFAULT_METRIC)
    over_time = Once(choices=OVER_TIME_FORMS)
    # The map's layers: the probes' regions, real users' cities, or both (real users show only where they are).
    layer = Once(choices=MAP_LAYERS, default=DEFAULT_LAYER)
    # pool=on: several targets' calls merged into one figure per region, as if one target; off (absent), every
    # figure keeps targets apart (latency.per_target).
    pool = Once(choices=POOL_CHOICES)
    map_target = MapTarget()
    # One workload's figures (probes.readings.workload); absent or blank: every workload.
    workload = Once(choices=WORKLOADS)
    # The window when none is given (neither window nor since nor until).
    default_window = DEFAULT_WINDOW

    def clean(self):
        data = super().clean()
        if any(name in self.errors for name in ("since", "until", "window")):
            return data
        since_text, until_text = data.get("since"), data.get("until")
        window = data.get("window") or ("custom" if since_text or until_text else self.default_window)
        data["window"] = window
        if window != "custom":
            if since_text or until_text:
                name = "since" if since_text else "until"
                self.add_error(name, _("%(param)s applies to window=custom only") % {"param": name})
            else:
                data["since"], data["until"] = self.now - WINDOWS[window], self.now
            return data
        if not since_text:
            self.add_error("since", _("a custom window needs since (ISO 8601 or relative such as 24h)"))
            return data
        try:
            since = self.when("since", since_text)
        except ValidationError as exc:
            self.add_error("since", exc)
            return data
        try:
            until = self.when("until", until_text) if until_text else self.now
        except ValidationError as exc:
            self.add_error("until", exc)
            return data
        if since >= until:
            self.add_error("since", _("since must be before until"))
        elif until - since > MAX_WINDOW:
            self.add_error(
                "since", _("the window is longer than %(days)d days; choose a shorter one") % {"days": MAX_WINDOW.days}
            )
        else:
            data["since"], data["until"] = since, until
        return data

    def build(self) -> Filters:
        data = self.cleaned_data
        return Filters(
            target_ids=data.get("target", []),
            region_ids=data.get("region", []),
            since=data["since"],
            until=data["until"],
            metric=data["metric"],
            percentile=PERCENTILES[data["percentile"]],
            window=data["window"],
            workload=data.get("workload") or "",
        )

    @cached_property
    def selected(self) -> dict:
        """The values the page's form shows: cleaned when valid, else as
        typed, so a mistake can be corrected in place."""
        valid = self.is_valid()
        data = self.cleaned_data if valid else {}

        def last(name: str, default: str) -> str:
            typed = self.typed(name)
            return typed[-1] if typed else default

        def listed(name: str) -> list[str]:
            # A parameter the page decides itself (a region page's region) is not shown.
            return self.typed(name) if name in self.fields else []

        return {
            "targets": data.get("target") or [int(t) for t in listed("target") if t.isdigit()],
            "regions": listed("region"),
            "window": data["window"] if valid else last("window", DEFAULT_WINDOW),
            "since": last("since", ""),
            "until": last("until", ""),
            "percentile": data["percentile"] if valid else last("percentile", DEFAULT_PERCENTILE),
            "metric": data["metric"] if valid else last("metric", DEFAULT_METRIC),
            "over_time": (data.get("over_time") or "") if valid else last("over_time", ""),
            "layer": (data.get("layer") or DEFAULT_LAYER) if valid else last("layer", DEFAULT_LAYER),
            "pool": bool(data.get("pool")) if valid else bool(self.typed("pool")),
            "map_target": str(data.get("map_target") or "") if valid else last("map_target", ""),
            "workload": (data.get("workload") or "") if valid else last("workload", ""),
        }

    def query_without(self, *names: str) -> str:
        """The query as given (blank values left out), minus `names`, for links."""
        query = QueryDict(mutable=True)
        for name in self.data:
            if name not in names and (typed := self.typed(name)):
                query.setlist(name, typed)
        return query.urlencode()


class RegionPageFilterForm(DashboardFilterForm):
    """A region's page: the page's own region decides, and every target is ranked."""

    target = None
    region = None
    layer = None
    pool = None
    map_target = None


# /where/?share-<region slug>=<number>: one parameter per region, the same
# name as the page's input for that region, so a plain GET form writes the
# mix into the URL and a link can carry it.
SHARE_PREFIX = "share-"
# The windows a mix can be taken from real users over (presets of the dashboard's).
REAL_USER_MIX_WINDOWS = ("24h", "7d", "30d")
# Shares are counts of users or percentages; the bound keeps the sum of
# fifteen of them far from a float overflow.
MAX_SHARE = 1_000_000_000


class Share(Once):
    """A region's share of the users: a number from 0 to MAX_SHARE (blank: not given)."""

    def to_python(self, values) -> float | None:
        text = super().to_python(values)
        if text is None:
            return None
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        # NaN fails both comparisons, so "nan" is refused too.
        if not 0 <= number <= MAX_SHARE:
            raise ValidationError(
                _("%(param)s must be a number from 0 to %(max)s, got %(value)s")
                % {"param": self.param, "max": f"{MAX_SHARE:,}", "value": repr(text)}
            )
        return number


class MixForm(DashboardFilterForm):
    """/where/: a traffic mix, one share-<region slug> parameter per region
    (any non-negative numbers, normalised to 100 %; at least one above 0),
    with the dashboard's window, metric and percentile. Every active region
    has an input, as has any other region the URL names."""

    target = None
    region = None
    layer = None
    pool = None
    map_target = None
    # "Use my real users' places from the last 7 days": the mix is the real users' calls, each at the
    # region nearest its city (probes.readings.real_users.region_shares), instead of shares typed in.
    real_users = Once(choices=REAL_USER_MIX_WINDOWS)

    def __init__(self, data, *, now: datetime) -> None:
        super().__init__(data, now=now)
        given = [name for name in self.data if name.startswith(SHARE_PREFIX)]
        slugs = [name.removeprefix(SHARE_PREFIX) for name in given]
        shown = Region.objects.filter(Q(active=True) | Q(slug__in=slugs)).order_by("name", "slug")
        self.share_regions: dict[str, Region] = {SHARE_PREFIX + region.slug: region for region in shown}
        # Inputs in the page's order, then any name no region has (refused in clean()).
        for name in [*self.share_regions, *(n for n in given if n not in self.share_regions)]:
            self.fields[name] = Share()
            self.fields[name].param = name

    @property
    def share_names(self) -> list[str]:
        return [name for name in self.fields if name.startswith(SHARE_PREFIX)]

    def clean(self):
        data = super().clean()
        for name in self.share_names:
            if name not in self.share_regions and name not in self.errors:
                self.add_error(
                    name,
                    _("unknown region %(slug)s in %(param)s")
                    % {
                        "slug": repr(name.removeprefix(SHARE_PREFIX)),
                        "param": name,
                    },
                )
        if any(name in self.errors for name in self.share_names):
            return data
        given = [name for name in self.share_names if data.get(name) is not None]
        if data.get("real_users") and "real_users" not in self.errors:
            if given:
                self.add_error("real_users", _("real_users takes the mix from real users: give it or shares, not both"))
            elif not self.real_shares:
                self.add_error(
                    "real_users",
                    _(
                        "no place of real users reached the minimum of %(k)s calls in the last %(window)s: "
                        "give the shares by hand"
                    )
                    % {"k": readings.real_users.min_samples(), "window": data["real_users"]},
                )
            return data
        if given and not any(data[name] > 0 for name in given):
            self.add_error(given[0], _("every share is 0: give at least one region a share above 0"))
        return data

    @cached_property
    def real_shares(self) -> dict[int, float]:
        """The mix of real users' places over real_users (a window up to now), by nearest region: calls."""
        window = self.cleaned_data.get("real_users") if hasattr(self, "cleaned_data") else None
        if not window:
            return {}
        return readings.real_users.region_shares(self.now - WINDOWS[window], self.now)

    def build(self) -> tuple[Filters, dict[int, float]]:
        """The filters and the mix: region id to share as given (not yet
        normalised; empty when no share was given), or real users' calls
        by nearest region with real_users."""
        if self.cleaned_data.get("real_users"):
            return super().build(), dict(self.real_shares)
        shares = {
            self.share_regions[name].id: self.cleaned_data[name]
            for name in self.share_names
            if self.cleaned_data.get(name) is not None
        }
        return super().build(), shares

    @cached_property
    def share_inputs(self) -> list[dict]:
        """One input per region, in the page's order, holding what was typed."""
        inputs = []
        # With real users' shares: each region's percentage of them, to be read and adjusted by hand.
        real = self.real_shares if self.is_valid() else {}
        total = sum(real.values())
        for name, region in self.share_regions.items():
            typed = self.typed(name)
            value = typed[-1] if typed else ""
            if total:
                value = f"{100 * real.get(region.id, 0) / total:.1f}".removesuffix(".0")
            inputs.append({"name": name, "region": region, "value": value})
        return inputs


class ExportFilterForm(ParamsForm):
    """The exports' filters: target, probe (ids), region (slugs) and outcome,
    all repeatable; since and until (ISO 8601 or relative such as 24h;
    default the last 24 hours, [since, until) half-open); workload (one of
    probes.engine.workloads, as the dashboard's; blank: every workload);
    bucket (regions.csv only)."""

    region = RegionSlugs()
    outcome = Outcomes()
    bucket = Once(choices=BUCKETS, default=DEFAULT_BUCKET)
    until = Once()
    since = Once()
    target = Ids(Target)
    probe = Ids(Probe)
    workload = Once(choices=WORKLOADS)

    def clean_until(self):
        text = self.cleaned_data["until"]
        return self.when("until", text) if text else None

    def clean_since(self):
        text = self.cleaned_data["since"]
        return self.when("since", text) if text else None

    def clean(self):
        data = super().clean()
        if "since" in self.errors or "until" in self.errors:
            return data
        until = data.get("until") or self.now
        since = data.get("since") or until - DEFAULT_RANGE
        if since >= until:
            self.add_error("since", _("since must be before until"))
        elif until - since > MAX_WINDOW:
            self.add_error(
                "since",
                _("since: the range to until is longer than %(days)d days; choose a shorter one")
                % {"days": MAX_WINDOW.days},
            )
        else:
            data["since"], data["until"] = since, until
        return data

    def build(self) -> ExportFilters:
        data = self.cleaned_data
        return ExportFilters(
            since=data["since"],
            until=data["until"],
            target_ids=data["target"],
            probe_ids=data["probe"],
            region_ids=data["region"],
            outcomes=data["outcome"],
            workload=data.get("workload") or "",
            # A form without the bucket field (the API's measurement rows, listed one by one) keeps the default.
            **({"bucket": data["bucket"]} if "bucket" in data else {}),
        )


class RealUsersExportForm(ExportFilterForm):
    """real-users.csv: since, until and target as the other exports; bucket 1h, 1d or all (real users are
    kept by the hour, so there are no 5-minute buckets). Regions, probes, outcomes and workloads are the probes'
    and do not apply."""

    region = None
    outcome = None
    probe = None
    # Real users' calls are not the probes' and have no workload.
    workload = None
    bucket = Once(choices=REAL_USER_BUCKETS, default=DEFAULT_BUCKET)

    def build(self) -> ExportFilters:
        data = self.cleaned_data
        return ExportFilters(since=data["since"], until=data["until"], target_ids=data["target"], bucket=data["bucket"])


class FeedTarget(Once):
    """The live feed's one target: an id, or blank / "all" for every target.
    Not looked up: the feed never reads the database, and an id with no
    target simply hears nothing."""

    def to_python(self, values) -> int | None:
        value = super().to_python(values)
        if value in (None, "all"):
            return None
        if not (value.isascii() and value.isdigit() and 1 <= int(value) <= MAX_ID):
            raise ValidationError(
                _("%(param)s must be a target id or all, got %(value)s") % {"param": self.param, "value": repr(value)}
            )
        return int(value)


class LiveFeedForm(ParamsForm):
    """/ws/measurements/?target=<id>: which broadcasts a socket hears."""

    target = FeedTarget()

    def build(self) -> int | None:
        return self.cleaned_data["target"]


class WorkersForm(ParamsForm):
    """/api/workers?region=<slug>: which regions' workers (repeatable; none or "all": every region)."""

    region = RegionSlugs(allow_all=True)

    def build(self) -> list[int]:
        return self.cleaned_data["region"]


@dataclass(frozen=True)
class WorkloadQuery:
    """What the workload readings are asked for (probes.readings.workloads)."""

    target_ids: list[int]
    region_ids: list[int]
    since: datetime
    until: datetime
    window: str  # the preset, or "custom"


# The workloads' window when none is given: long prompts are probed less often than short ones.
WORKLOADS_DEFAULT_WINDOW = "24h"


class WorkloadsForm(DashboardFilterForm):
    """/api/workloads, /export/workloads.csv and the target page's workloads: target (ids, repeatable, at least
    one; "all" is refused, since these are raw reads), region (slugs, repeatable, or "all"), and the dashboard's
    window, since and until, at most MAX_WORKLOADS_WINDOW long (default WORKLOADS_DEFAULT_WINDOW)."""

    target = Ids(Target)
    percentile = None
    metric = None
    over_time = None
    layer = None
    pool = None
    map_target = None
    # The readings are per workload class already: one workload chosen would leave one class and no fit.
    workload = None

    default_window = WORKLOADS_DEFAULT_WINDOW

    def clean(self):
        data = super().clean()
        if "target" not in self.errors and not data.get("target"):
            self.add_error("target", _("target is required: give a target id"))
        since, until = data.get("since"), data.get("until")
        if isinstance(since, datetime) and isinstance(until, datetime) and until - since > MAX_WORKLOADS_WINDOW:
            name = "since" if data.get("window") == "custom" else "window"
            self.add_error(
                name,
                _(
                    "%(param)s: workload readings are read from raw measurements, so the window is at most "
                    "%(days)d days; choose a shorter one"
                )
                % {"param": name, "days": MAX_WORKLOADS_WINDOW.days},
            )
        return data

    @cached_property
    def selected(self) -> dict:
        """The window as the section's form shows it: cleaned when valid, else as typed."""
        valid = self.is_valid()

        def last(name: str, default: str) -> str:
            typed = self.typed(name)
            return typed[-1] if typed else default

        return {
            "window": self.cleaned_data["window"] if valid else last("window", WORKLOADS_DEFAULT_WINDOW),
            "since": last("since", ""),
            "until": last("until", ""),
        }

    def build(self) -> WorkloadQuery:  # type: ignore[override]
        data = self.cleaned_data
        return WorkloadQuery(
            target_ids=data["target"],
            region_ids=data.get("region", []),
            since=data["since"],
            until=data["until"],
            window=data["window"],
        )


def dashboard_filters(params, now: datetime) -> Filters:
    """Filters from dashboard query parameters (a QueryDict or a mapping of
    name to list of values), or BadParameter naming the first bad one."""
    return DashboardFilterForm(params, now=now).result()


def export_filters(params, now: datetime) -> ExportFilters:
    """ExportFilters from export query parameters, or BadParameter naming the first bad one."""
    return ExportFilterForm(params, now=now).result()


class LeaderboardForm(DashboardFilterForm):
    """A model group's leaderboard (/models/<id>/ and the API's leaderboard): the dashboard's window, metric,
    percentile (the ranking) and workload, and where from: one region (a slug), a traffic mix (mix=slug:share,...,
    shares as on /where/, normalised), or neither (every region)."""

    target = None
    region = Once()
    over_time = None
    layer = None
    mix = Once()

    def clean_region(self) -> str | None:
        slug = self.cleaned_data.get("region")
        if slug is not None and ("\x00" in slug or not Region.objects.filter(slug=slug).exists()):
            raise ValidationError(_("unknown %(param)s %(slugs)s") % {"param": "region", "slugs": repr(slug)})
        return slug

    def clean_mix(self) -> dict[int, float]:
        text = self.cleaned_data.get("mix")
        if not text:
            return {}
        shares: dict[str, float] = {}
        for part in text.split(","):
            slug, sep, number = part.strip().partition(":")
            try:
                share = float(number) if sep else math.nan
            except ValueError:
                share = math.nan
            if not 0 <= share <= MAX_SHARE:
                raise ValidationError(
                    _("mix must be region:share pairs separated by commas, each share from 0 to %(max)s; got %(part)s")
                    % {"max": f"{MAX_SHARE:,}", "part": repr(part)}
                )
            shares[slug] = shares.get(slug, 0.0) + share
        askable = [s for s in shares if "\x00" not in s]
        by_slug = dict(Region.objects.filter(slug__in=askable).values_list("slug", "id"))
        unknown = [s for s in shares if s not in by_slug]
        if unknown:
            raise ValidationError(
                _("unknown %(param)s %(slugs)s") % {"param": "region", "slugs": ", ".join(repr(s) for s in unknown)}
            )
        if not any(shares.values()):
            raise ValidationError(_("every share is 0: give at least one region a share above 0"))
        return {by_slug[slug]: share for slug, share in shares.items()}

    def clean(self):
        data = super().clean()
        if data.get("region") and data.get("mix"):
            self.add_error("mix", _("give region or mix, not both"))
        return data

    def build(self) -> tuple[Filters, str | None, dict[int, float]]:  # type: ignore[override]
        data = self.cleaned_data
        f = Filters(
            since=data["since"],
            until=data["until"],
            metric=data["metric"],
            percentile=PERCENTILES[data["percentile"]],
            window=data["window"],
            workload=data.get("workload") or "",
        )
        return f, data.get("region"), data.get("mix") or {}
