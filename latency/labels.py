"""Display names of probes.metrics' metrics, in the reader's language.

probes.metrics is plain data without Django; its English words stay the
contract of CSV headers and logs. What people read on the site (pages,
charts, the script's config) comes from here, translated. Every entry is a
literal inside gettext_lazy, so makemessages finds it; a metric missing
here falls back to probes.metrics' English.
"""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from probes import metrics
from probes.engine.workloads import WORKLOADS as WORKLOAD_NAMES

LABELS: dict[str, Promise] = {
    "ttft": _("Time to first token"),
    "ttfat": _("Time to first answer token"),
    "ttfb": _("Time to first byte"),
    "connect": _("TCP connect"),
    "tls": _("TLS handshake"),
    "total": _("Total time"),
    "dns": _("DNS lookup"),
    "tokens_per_s": _("Tokens per second"),
    "first_event": _("First stream event"),
    "request_sent": _("Request sent"),
    "warm_ttft": _("TTFT of the call filling the cache"),
    "output_tokens": _("Output tokens"),
    "itl_p50": _("Inter-token latency p50"),
    "itl_p95": _("Inter-token latency p95"),
    "itl_max": _("Inter-token latency max"),
}

SHORT: dict[str, Promise] = {
    "ttft": _("TTFT"),
    "ttfat": _("TTFAT"),
    "ttfb": _("TTFB"),
    "connect": _("TCP connect"),
    "tls": _("TLS handshake"),
    "total": _("total time"),
    "dns": _("DNS"),
    "tokens_per_s": _("tokens/s"),
    "first_event": _("first event"),
    "request_sent": _("request sent"),
    "warm_ttft": _("cache-filling TTFT"),
    "output_tokens": _("output tokens"),
    "itl_p50": _("ITL p50"),
    "itl_p95": _("ITL p95"),
    "itl_max": _("ITL max"),
}

# Workloads (probes.engine.workloads) as the selectors and the pages' "which workload" line name them.
WORKLOADS: dict[str, Promise] = {
    "short": _("short prompt"),
    "prompt_1k": _("prompt of about 1k tokens"),
    "prompt_10k": _("prompt of about 10k tokens"),
    "prompt_100k": _("prompt of about 100k tokens"),
    "cached_pair": _("cached pair (10k-token prompt, cache warm)"),
}


def workload(name: str) -> str:
    """'prompt of about 100k tokens', translated; 'All workloads' for an empty name (the name when unknown)."""
    if not name:
        return str(_("All workloads"))
    return str(WORKLOADS.get(name, name))


def workload_options() -> list[tuple[str, str]]:
    """(value, label) of the workload selector: every workload (empty), then each one in probes.engine's order."""
    return [(name, workload(name)) for name in ("", *WORKLOAD_NAMES)]


def label(name: str) -> str:
    """'Time to first token', translated; the name itself when unknown."""
    m = metrics.BY_NAME.get(name)
    return str(LABELS.get(name, m.label if m else name))


def short(name: str) -> str:
    """'TTFT', translated: chart titles and hover text."""
    m = metrics.BY_NAME.get(name)
    return str(SHORT.get(name, m.short if m else name))


def unit(name: str) -> str:
    """The metric's unit: 'ms' and 'tok/s' read the same in both languages."""
    m = metrics.BY_NAME.get(name)
    return m.unit if m else "ms"


def axis_title(name: str) -> str:
    return f"{short(name)} ({unit(name)})"


def selectable() -> list[tuple[str, str]]:
    """(name, label) of the selector's metrics, in probes.metrics' order."""
    return [(m.name, label(m.name)) for m in metrics.SELECTABLE]
