"""An incident's summary as words, in whichever language is active.

The evaluator keeps what a summary says as plain data (`Incident.summary_data`: the metric, the regions, the
figures, the phase that moved and how far) and stores its English rendering in `Incident.summary` (search, the
API, the timeline's first line). A reader's page and a channel's notification render the same data again in their
own language, so a Chinese team reads a Chinese summary of an incident the site opened while English was active.

Plain Python with Django's translation functions: no ORM."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext, gettext_lazy, override

# Version of the data's shape: a reader that meets another falls back to the stored English text.
VERSION = 1

SEGMENT_NAMES = {
    "dns": gettext_lazy("DNS"),
    "connect": gettext_lazy("TCP connect"),
    "tls": gettext_lazy("TLS"),
    "server_wait": gettext_lazy("server wait"),
    "first_token": gettext_lazy("first token"),
    "streaming": gettext_lazy("streaming"),
}
READINGS = {
    "network": gettext_lazy("the network path, not the provider"),
    "server_wait": gettext_lazy("queueing at the provider, not the network"),
    "first_token": gettext_lazy("prefill or queueing at the provider, not the network"),
    "streaming": gettext_lazy("slower generation at the provider, not the network"),
}


def _(message: str) -> str:
    # gettext under its usual name (xgettext finds the messages by it), typed for the formatting below.
    return str(gettext(message))


SCOPES = {"regional": gettext_lazy("regional"), "global": gettext_lazy("global")}
SEVERITIES = {"page": gettext_lazy("page"), "ticket": gettext_lazy("ticket")}
# The burn-rate windows (probes.readings.slos.BURN_WINDOWS) as a person reads them.
WINDOWS = {
    "5m": gettext_lazy("5 min"),
    "30m": gettext_lazy("30 min"),
    "1h": gettext_lazy("1 h"),
    "6h": gettext_lazy("6 h"),
    "24h": gettext_lazy("24 h"),
    "3d": gettext_lazy("3 days"),
}


def window_name(label: str) -> str:
    return str(WINDOWS.get(label, label))


def objective_summary_text(data: dict[str, Any]) -> str:
    """An objective's burn-rate alert (probes.slos.alerts): "Objective “chat 99%” burns its error budget at 15.2x
    over 1 h and 16.0x over 5 min, above a page's 14.4x, in Lagos and Nairobi on gpt-eu; TCP connect
    unchanged, server wait +1.1 s: queueing at the provider, not the network. 2 of 3 regions: regional." """
    values = {
        "objective": data["objective"],
        "long_burn": f"{data['burn_long']:.1f}",
        "long": window_name(data["long"]),
        "short_burn": f"{data['burn_short']:.1f}",
        "short": window_name(data["short"]),
        "factor": f"{data['factor']:g}",
        "places": names(data["places"]),
        "targets": names(data["targets"]),
    }
    if data["severity"] == "page":
        text = _(
            "Objective “%(objective)s” burns its error budget at %(long_burn)sx over %(long)s and %(short_burn)sx "
            "over %(short)s, above a page's %(factor)sx, in %(places)s on %(targets)s"
        )
    else:
        text = _(
            "Objective “%(objective)s” burns its error budget at %(long_burn)sx over %(long)s and %(short_burn)sx "
            "over %(short)s, above a ticket's %(factor)sx, in %(places)s on %(targets)s"
        )
    text %= values
    why = why_text(data.get("why") or {})
    ending = _("%(summary)s; %(why)s.") if why else _("%(summary)s.")
    text = ending % {"summary": text, "why": why}
    tail = _("%(breaching)d of %(measured)d regions: %(scope)s.") % {
        "breaching": data["breaching"],
        "measured": data["measured"],
        "scope": SCOPES.get(data["scope"], data["scope"]),
    }
    return _("%(summary)s %(regions)s") % {"summary": text, "regions": tail}


def duration(ms: float) -> str:
    """820 ms, 1.9 s, 12 s: what a person reads in an alert."""
    if ms < 1000:
        return _("%(value)s ms") % {"value": f"{ms:.0f}"}
    seconds = ms / 1000.0
    return _("%(value)s s") % {"value": f"{seconds:.1f}" if seconds < 10 else f"{seconds:.0f}"}


def signed(ms: float) -> str:
    return ("+" if ms >= 0 else "-") + duration(abs(ms))


def names(items: list[str]) -> str:
    """ "Lagos", "Lagos and Nairobi", "Lagos, Nairobi and Tokyo"."""
    if len(items) == 1:
        return items[0]
    head = items[0]
    for name in items[1:-1]:
        head = _("%(names)s, %(name)s") % {"names": head, "name": name}
    return _("%(names)s and %(last)s") % {"names": head, "last": items[-1]}


def why_text(why: dict[str, Any]) -> str:
    """The attribution's sentence (probes.alerts.attribution): which phase moved and what that says."""
    note = why.get("note", "")
    if note == "cold_start":
        return _("slow only on the first call after %(minutes)s min idle: a cold start, not a trend") % {
            "minutes": f"{why['idle_minutes']:.0f}"
        }
    if note == "no_baseline":
        return _("no baseline to compare the phases with")
    if note == "no_phase":
        return _("no single phase moved clearly")
    if "reading" not in why:
        return ""
    parts = []
    for part in why["parts"]:
        kind, phase = part[0], str(SEGMENT_NAMES[part[1]])
        if kind == "unchanged":
            parts.append(_("%(phase)s unchanged") % {"phase": phase})
        elif kind == "change":
            parts.append(f"{phase} {signed(part[2])}")
        elif kind == "beyond":
            parts.append(
                _("%(phase)s %(change)s (%(beyond)s beyond the round trip)")
                % {"phase": phase, "change": signed(part[2]), "beyond": signed(part[3])}
            )
        else:  # "with_it": server wait grew with connect, by one round trip
            parts.append(
                _("and %(phase)s %(change)s with it (one round trip)") % {"phase": phase, "change": signed(part[2])}
            )
    joined = parts[0]
    for part in parts[1:]:
        joined = _("%(changes)s, %(change)s") % {"changes": joined, "change": part}
    return _("%(changes)s: %(reading)s") % {"changes": joined, "reading": READINGS[why["reading"]]}


def summary_text(data: dict[str, Any]) -> str:
    """What a person reads first: "TTFT p95 from Lagos and Nairobi to gpt-eu is 2.3x its 7-day baseline
    (1.9 s against 820 ms) for 10 min; TCP connect unchanged, server wait +1.1 s: queueing at the provider, not
    the network. 2 of 15 regions: regional." """
    if data.get("kind") == "objective":
        return objective_summary_text(data)
    values: dict[str, Any] = {
        "places": names(data["places"]),
        "target": data["target"],
        "minutes": data["minutes"],
    }
    if data["metric"] in ("error_rate", "missed", "rate_limited"):
        values.update(value=f"{data['value']:.0f}", threshold=f"{data['threshold']:g}")
        if data["metric"] == "error_rate":
            text = _(
                "Error rate from %(places)s to %(target)s is %(value)s%% of calls, above the %(threshold)s%% "
                "threshold, for %(minutes)d min."
            )
        elif data["metric"] == "rate_limited":
            text = _(
                "Rate-limited share from %(places)s to %(target)s is %(value)s%% of calls (refused for rate limits "
                "or overload), above the %(threshold)s%% threshold, for %(minutes)d min."
            )
        else:
            text = _(
                "Missed runs from %(places)s to %(target)s are %(value)s%% of scheduled runs, above the "
                "%(threshold)s%% threshold, for %(minutes)d min."
            )
        text %= values
    else:
        values.update(what=f"{data['short']} {data['percentile']}", why=why_text(data["why"]))
        if data.get("baseline"):
            values.update(
                ratio=f"{data['value'] / data['baseline']:.1f}",
                value=duration(data["value"]),
                baseline=duration(data["baseline"]),
            )
            if data["same_hour"]:
                text = _(
                    "%(what)s from %(places)s to %(target)s is %(ratio)sx its 7-day baseline at this hour "
                    "(%(value)s against %(baseline)s) for %(minutes)d min; %(why)s."
                )
            else:
                text = _(
                    "%(what)s from %(places)s to %(target)s is %(ratio)sx its 7-day baseline "
                    "(%(value)s against %(baseline)s) for %(minutes)d min; %(why)s."
                )
        else:
            values.update(value=duration(data["value"]), threshold=duration(data["threshold"]))
            text = _(
                "%(what)s from %(places)s to %(target)s is %(value)s, above the %(threshold)s threshold, "
                "for %(minutes)d min; %(why)s."
            )
        text %= values
    tail = _("%(breaching)d of %(measured)d regions: %(scope)s.") % {
        "breaching": data["breaching"],
        "measured": data["measured"],
        "scope": SCOPES.get(data["scope"], data["scope"]),
    }
    return _("%(summary)s %(regions)s") % {"summary": text, "regions": tail}


def event_text(data: dict[str, Any] | None, stored: str) -> str:
    """A timeline line's detail in the active language from its data (IncidentEvent.detail_data); the stored text
    for a line written before its data was kept."""
    say = (data or {}).get("say")
    if data is None or say is None:
        return stored
    if say == "summary":
        return readable(data.get("summary"), stored)
    if say == "silenced_until":
        values = {"until": data["until"], "reason": data.get("reason", "")}
        if values["reason"]:
            return _("silenced until %(until)s UTC: %(reason)s") % values
        return _("silenced until %(until)s UTC") % values
    if say == "clear_for":
        return _("clear for %(minutes)d min") % {"minutes": data["minutes"]}
    if say == "rule_disabled":
        return _("the rule was disabled")
    if say == "burn_below":
        return _("the burn over %(short)s fell to %(factor)sx or below") % {
            "short": window_name(data["short"]),
            "factor": f"{data['factor']:g}",
        }
    if say == "objective_not_judged":
        return _("the objective was disabled, or changed and is being counted again")
    if say == "severity":
        values = {
            "from": SEVERITIES.get(data["from"], data["from"]),
            "to": SEVERITIES.get(data["to"], data["to"]),
            "factor": f"{data['factor']:g}",
            "long": window_name(data["long"]),
            "short": window_name(data["short"]),
        }
        return _("%(from)s became a %(to)s: burning above %(factor)sx over %(long)s and %(short)s") % values
    if say == "resolved_in_silence":
        return _("resolved inside a silence")
    if say == "sent":
        return _("Sent to %(channel)s.") % {"channel": data["channel"]}
    if say == "attempt_failed":
        values = {"channel": data["channel"], "reason": data["reason"], "attempt": data["attempt"]}
        if data["last"]:
            return _("Attempt %(attempt)d to %(channel)s failed, the last one: %(reason)s") % values
        return _("Attempt %(attempt)d to %(channel)s failed, to be retried: %(reason)s") % values
    return stored


def english_event(data: dict[str, Any]) -> str:
    """A timeline line's detail as stored: in English."""
    with override("en"):
        return event_text(data, "")


def readable(data: dict[str, Any] | None, stored: str) -> str:
    """The summary in the active language from its data; the stored text for an incident opened before the
    data was kept (or kept in another shape)."""
    if not data or data.get("v") != VERSION:
        return stored
    return summary_text(data)
