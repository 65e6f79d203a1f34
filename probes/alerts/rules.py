"""What a rule means, and why a rule is refused.

A rule that can never fire (no condition, a quorum larger than the regions
that measure its target, more samples than its probes can take in the
window, a share above 100%) or that always fires (a threshold of zero, a
baseline factor of 1 or less) is refused with the reason, in the admin and
wherever rules are written. `refusals` reads the probes that exist now; a
probe removed later makes a rule quiet, which the evaluation pass cannot
tell from a healthy target, so the admin's rule list shows how many regions
each rule can judge (`reach`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from probes.alerts.models import LATENCY_METRICS, RATE_METRICS


def is_latency(metric: str) -> bool:
    return metric in LATENCY_METRICS


def is_rate(metric: str) -> bool:
    return metric in RATE_METRICS


@dataclass(frozen=True)
class Reach:
    """What the probes that exist let a rule judge."""

    regions: int  # regions with an enabled probe of the target (of the rule's subset, if any)
    max_samples: int  # the most calls one region can have in the window, over the rule's targets


def reach(target_id: int | None, region_ids: Iterable[int] | None, window_minutes: int) -> Reach:
    """Regions that can be judged, and the most samples a region can have in
    the window: per region, each enabled probe of the target contributes
    window / interval calls; the best (target, region) counts."""
    from probes.models import Probe

    probes = Probe.objects.filter(enabled=True, regions__active=True)
    if target_id is not None:
        probes = probes.filter(target_id=target_id)
    region_ids = list(region_ids) if region_ids is not None else []
    if region_ids:
        probes = probes.filter(regions__id__in=region_ids)
    rows = probes.values_list("target_id", "regions__id", "interval_seconds")
    window_s = window_minutes * 60
    per_pair: dict[tuple[int, int], int] = {}
    for target, region, interval in rows:
        if region_ids and region not in region_ids:
            continue
        per_pair[(target, region)] = per_pair.get((target, region), 0) + max(1, window_s // max(1, interval))
    regions_per_target: dict[int, set[int]] = {}
    for target, region in per_pair:
        regions_per_target.setdefault(target, set()).add(region)
    return Reach(
        regions=max((len(r) for r in regions_per_target.values()), default=0),
        max_samples=max(per_pair.values(), default=0),
    )


def below_the_floor(target_id: int, region_ids: Iterable[int] | None, threshold_ms: float) -> list[tuple[str, float]]:
    """(region city, round-trip floor in ms) of the regions measuring the target whose distance alone, at the
    speed of light in fiber, takes longer than threshold_ms: there every call breaches, whatever happens."""
    from probes.geo import path_floor_ms
    from probes.models import Region, Target

    target = Target.objects.filter(pk=target_id).values("latitude", "longitude").first()
    if not target or target["latitude"] is None or target["longitude"] is None:
        return []
    regions = Region.objects.filter(active=True, probes__enabled=True, probes__target_id=target_id).distinct()
    wanted = list(region_ids) if region_ids is not None else []
    if wanted:
        regions = regions.filter(id__in=wanted)
    out = []
    for city, lat, lon in regions.values_list("city", "latitude", "longitude"):
        floor = path_floor_ms(lat, lon, target["latitude"], target["longitude"])
        if floor >= threshold_ms:
            out.append((city, floor))
    return sorted(out, key=lambda item: -item[1])


def quorum(min_regions: int, min_regions_percent: float | None, measured: int) -> int:
    """Regions that must breach when `measured` regions were judged: the
    larger of the count and the share (rounded up), never below 1."""
    needed = max(1, min_regions)
    if min_regions_percent is not None and measured:
        needed = max(needed, math.ceil(measured * min_regions_percent / 100.0 - 1e-9))
    return needed


def refusals(
    *,
    metric: str,
    percentile: str,
    threshold_ms: float | None,
    threshold_percent: float | None,
    baseline_factor: float | None,
    window_minutes: int | None,
    min_samples: int | None,
    min_regions: int | None,
    min_regions_percent: float | None,
    target_id: int | None,
    region_ids: Iterable[int] | None,
) -> dict[str, str]:
    """{field: reason} for each reason the rule can never fire or always
    fires; empty when it is a rule that can do both."""
    problems: dict[str, str] = {}
    if is_latency(metric):
        if not percentile:
            problems["percentile"] = _("Choose the percentile of %(metric)s the rule watches.") % {"metric": metric}
        if threshold_percent is not None:
            problems["threshold_percent"] = _(
                "A share applies to error rate, missed runs and rate-limited calls; a latency rule takes "
                "threshold_ms and/or baseline_factor."
            )
        if threshold_ms is None and baseline_factor is None:
            problems["threshold_ms"] = _(
                "This rule can never fire: give threshold_ms (absolute), baseline_factor (against the 7-day "
                "baseline) or both."
            )
        if threshold_ms is not None:
            longest_ms = settings.LATENCY_MAX_PROBE_TIMEOUT * 1000.0
            if threshold_ms <= 0:
                problems["threshold_ms"] = _("This rule would always fire: every call takes more than 0 ms.")
            elif threshold_ms >= longest_ms:
                problems["threshold_ms"] = _(
                    "This rule can never fire: no call is timed past the longest probe timeout (%(limit)s ms)."
                ) % {"limit": f"{longest_ms:.0f}"}
        if threshold_ms is not None and threshold_ms > 0 and baseline_factor is None and target_id is not None:
            slow = below_the_floor(target_id, region_ids, threshold_ms)
            judged = reach(target_id, region_ids, window_minutes or 10).regions
            needed = quorum(min_regions or 1, min_regions_percent, judged)
            if slow and len(slow) >= needed and "threshold_ms" not in problems:
                city, floor = slow[0]
                problems["threshold_ms"] = ngettext(
                    "This rule would always fire: light in fiber alone needs %(floor)s ms for a round trip from "
                    "%(city)s to the target, above threshold_ms, and %(n)d region is that far.",
                    "This rule would always fire: light in fiber alone needs %(floor)s ms for a round trip from "
                    "%(city)s to the target, above threshold_ms, and %(n)d regions are that far.",
                    len(slow),
                ) % {"floor": f"{floor:.0f}", "city": city, "n": len(slow)}
        if baseline_factor is not None and baseline_factor <= 1.0:
            problems["baseline_factor"] = _(
                "This rule would always fire: a region is above %(factor)s times its own baseline about half "
                "the time or more. Use a factor above 1, e.g. 1.5 or 2."
            ) % {"factor": f"{baseline_factor:g}"}
    elif is_rate(metric):
        if threshold_percent is None:
            problems["threshold_percent"] = _("This rule can never fire: give threshold_percent, a share in percent.")
        elif threshold_percent >= 100.0:
            problems["threshold_percent"] = _(
                "This rule can never fire: a share cannot be above 100%. Use a threshold below 100."
            )
        if threshold_ms is not None:
            problems["threshold_ms"] = _(
                "Error rate, missed runs and rate-limited calls are shares: use threshold_percent, not ms."
            )
        if baseline_factor is not None:
            problems["baseline_factor"] = _(
                "A baseline applies to latency metrics; error rate, missed runs and rate-limited calls take "
                "threshold_percent."
            )
    else:
        problems["metric"] = _("Unknown metric %(metric)s.") % {"metric": metric}

    if window_minutes and min_samples and not problems.keys() & {"metric"}:
        can = reach(target_id, region_ids, window_minutes)
        if can.regions == 0:
            problems["target" if target_id is not None else "regions"] = _(
                "This rule can never fire: no enabled probe measures its target from its regions. Add a probe "
                "(or regions to one) first."
            )
        else:
            if min_samples > can.max_samples:
                problems["min_samples"] = ngettext(
                    "This rule can never fire: a region can have at most %(most)d call in %(window)d min with the "
                    "probes as they are, fewer than min_samples %(min)d. Lengthen the window or lower min_samples.",
                    "This rule can never fire: a region can have at most %(most)d calls in %(window)d min with the "
                    "probes as they are, fewer than min_samples %(min)d. Lengthen the window or lower min_samples.",
                    can.max_samples,
                ) % {"most": can.max_samples, "window": window_minutes, "min": min_samples}
            if min_regions and min_regions > can.regions:
                problems["min_regions"] = ngettext(
                    "This rule can never fire: it needs %(min)d regions to breach, and %(can)d region measures "
                    "its target.",
                    "This rule can never fire: it needs %(min)d regions to breach, and %(can)d regions measure "
                    "its target.",
                    can.regions,
                ) % {"min": min_regions, "can": can.regions}
    return problems
