"""The target page's "Workloads" section: its window (latency.forms.WorkloadsForm, the target being the page's),
the per-region tables and sentences, and the two figures the page hands its script (static/js/workloads.js).
Numbers come from probes.readings.workloads; this module only says them."""

from __future__ import annotations

from datetime import datetime

from django.http import QueryDict
from django.urls import reverse
from django.utils.translation import gettext as _

from latency.access import may_read_measurements
from latency.charts.workloads import bucket_text, prefill_figure, rate_limits_figure
from latency.forms import WorkloadsForm
from probes import readings
from probes.readings.selection import WINDOWS, BadParameter
from probes.readings.workloads import MAX_WINDOW, MIN_FIT_CALLS, RegionWorkloads

# Window names of the section's selector: presets a raw read may cover.
PANEL_WINDOWS = tuple(name for name, length in WINDOWS.items() if length <= MAX_WINDOW)
# The page's own parameters the section reads (the target is the page's).
PANEL_PARAMS = ("window", "since", "until")


def _percent(ratio: float | None) -> str:
    return "–" if ratio is None else f"{100 * ratio:.1f} %"


def _number(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def prefill_text(region: RegionWorkloads) -> str:
    fit = region.fit
    if fit.slope_ms_per_1k is None or fit.prefill_tokens_per_s is None:
        return _("No prefill rate: %(reason)s.") % {"reason": fit.reason}
    return _(
        "TTFT grows by %(slope)s ms per 1k input tokens: a prefill rate of about %(rate)s tokens/s "
        "(a least-squares line through %(n)d workload classes' medians)."
    ) % {"slope": _number(fit.slope_ms_per_1k, 1), "rate": _number(fit.prefill_tokens_per_s), "n": fit.points}


def cache_text(region: RegionWorkloads) -> str:
    cache = region.cache
    if not cache.calls:
        return _("No cached pairs in this window.")
    if cache.saving_p50_ms is None:
        saving = _("no cached pair has both of its times")
    else:
        saving = _("the cache saves %(ms)s ms of TTFT at the median (%(n)d pairs)") % {
            "ms": _number(cache.saving_p50_ms),
            "n": cache.saving_n,
        }
    if cache.hit_ratio is None:
        hits = _("the provider reports no cached input count")
    else:
        hits = _("%(ratio)s of pairs were served from the cache (%(hits)d of %(reported)d that report it)") % {
            "ratio": _percent(cache.hit_ratio),
            "hits": cache.hits,
            "reported": cache.reported,
        }
    return _("Cached pairs: %(saving)s; %(hits)s.") % {"saving": saving, "hits": hits}


def limits_text(region: RegionWorkloads) -> str:
    text = _("%(ratio)s of %(calls)d calls were refused for rate limits or overload") % {
        "ratio": _percent(region.rate_limited_ratio),
        "calls": region.calls,
    }
    requests, tokens = region.remaining_requests_min, region.remaining_tokens_min
    if requests is None and tokens is None:
        return text + _("; the provider reports no rate-limit headroom.")
    if tokens is None:
        least = _("%(requests)s requests") % {"requests": _number(requests)}
    elif requests is None:
        least = _("%(tokens)s tokens") % {"tokens": _number(tokens)}
    else:
        least = _("%(requests)s requests, %(tokens)s tokens") % {
            "requests": _number(requests),
            "tokens": _number(tokens),
        }
    return text + _("; the least headroom reported: %(least)s.") % {"least": least}


def _region_context(region: RegionWorkloads) -> dict:
    return {
        "slug": region.region,
        "name": region.region_name,
        "classes": [
            {
                "workload": c.workload,
                "calls": c.calls,
                "ok": c.ok,
                "rate_limited": _percent(c.rate_limited_ratio),
                "ttft_p50": _number(c.ttft_p50_ms),
                "input_tokens_p50": _number(c.input_tokens_p50),
            }
            for c in region.classes
        ],
        "prefill": prefill_text(region),
        "has_rate": region.fit.prefill_tokens_per_s is not None,
        "cache": cache_text(region),
        "limits": limits_text(region),
    }


def panel(request, target_id: int, now: datetime) -> dict:
    """The section's context: its form, error, regions, figures and links."""
    data = QueryDict(mutable=True)
    for name in PANEL_PARAMS:
        data.setlist(name, request.GET.getlist(name))
    data["target"] = str(target_id)
    form = WorkloadsForm(data, now=now)
    query = QueryDict(mutable=True)
    query.update({"target": str(target_id)})
    for name in PANEL_PARAMS:
        query.setlist(name, [v for v in request.GET.getlist(name) if v.strip()])
    out: dict = {
        "form": form,
        "windows": PANEL_WINDOWS,
        "min_calls": MIN_FIT_CALLS,
        "export_url": (
            f"{reverse('export-workloads')}?{query.urlencode()}" if may_read_measurements(request.user) else ""
        ),
        "error": None,
        "regions": [],
        "figures": None,
    }
    try:
        q = form.result()
    except BadParameter as exc:
        out["error"] = {"message": str(exc), "param": exc.param}
        return out
    read = readings.workloads(q.target_ids, q.since, q.until)
    from latency.api import workloads_no_data  # here: latency.api imports latency.views, which imports this

    out.update(
        regions=[_region_context(region) for region in read.regions],
        empty=workloads_no_data(q, read),
        bucket=bucket_text(read.bucket),
        figures={"prefill": prefill_figure(read), "rate_limits": rate_limits_figure(read)} if read.regions else None,
    )
    return out
