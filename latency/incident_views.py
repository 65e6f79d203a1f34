"""Incident pages: the list, one incident with its charts, acknowledging,
its public updates (what status pages show), and silences of a target (a
maintenance window).

Everything read comes from probes.readings (incidents.py); who may read or
act is latency.access's rule (incident_page, incident_action). The two
writes here are compare-and-swap updates, so two clicks (or two people)
record one acknowledgement and end a silence once.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from latency.access import incident_action, incident_page, may_read_incidents
from latency.charts.over_time import plotly_time
from latency.incident_forms import BackForm, IncidentFilterForm, IncidentUpdateForm, SilenceForm
from probes import readings
from probes.alerts.rules import is_latency
from probes.models import Incident, IncidentEvent, IncidentUpdate, Silence, Target

PER_PAGE = 50
ACKNOWLEDGE_PERMISSION = "probes.acknowledge_incident"
SILENCE_PERMISSION = "probes.add_silence"
UPDATE_PERMISSION = "probes.add_incidentupdate"
END_SILENCE_PERMISSION = "probes.change_silence"
# The charts around an incident: from an hour before it began to a quarter of an hour after it ended (or now).
CHART_BEFORE = timedelta(hours=1)
CHART_AFTER = timedelta(minutes=15)
# The rates have no time series of their own on the dashboard: their incidents show TTFT, what a user waits for.
RATE_CHART_METRIC = "ttft"
DEFAULT_CHART_PERCENTILE = "p95"


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def chart_queries(incident: readings.IncidentRow, now: datetime) -> dict[str, str]:
    """The query strings of the incident page's charts, in /api/*'s own
    parameters (latency.forms.DashboardFilterForm), as dashboard.js sends them."""
    metric = incident.metric if is_latency(incident.metric) else RATE_CHART_METRIC
    base = [
        ("target", str(incident.target_id)),
        *(("region", r.slug) for r in incident.regions),
        ("metric", metric),
        ("percentile", incident.percentile or DEFAULT_CHART_PERCENTILE),
        ("window", "custom"),
    ]
    end = incident.resolved_at or now
    return {
        "timeseries": urlencode(
            [*base, ("since", _iso(incident.started_at - CHART_BEFORE)), ("until", _iso(end + CHART_AFTER))]
        ),
        # The phases while it lasted: what moved is what the incident names.
        "phases": urlencode([*base, ("since", _iso(incident.started_at)), ("until", _iso(end))]),
    }


def silence_context(request: HttpRequest, target_id: int, back: str, now: datetime) -> dict:
    """The silences block of a page (the target's and an incident's): what is silenced, and the forms."""
    user = request.user
    return {
        "show_silences": True,
        "silences": readings.active_silences(target_id, now),
        "silence_target_id": target_id,
        "silence_form": SilenceForm(initial={"next": back}) if user.has_perm(SILENCE_PERMISSION) else None,
        "may_end_silence": user.has_perm(END_SILENCE_PERMISSION),
        "silence_back": back,
        "now": now,
    }


def markers(request: HttpRequest, *, target_id: int | None = None, region_id: int | None = None) -> list:
    """The open incidents a dashboard page shows a marker for: none to a reader not signed in (public mode)."""
    if not may_read_incidents(request.user):
        return []
    return readings.open_incidents(target_id=target_id, region_id=region_id)


@incident_page
def incidents(request: HttpRequest) -> HttpResponse:
    form = IncidentFilterForm(request.GET)
    if not form.is_valid():
        return render(request, "incidents/list.html", {"form": form, "error": True}, status=400)
    target = form.cleaned_data["target"]
    state = form.cleaned_data["state"]
    target_id = target.id if target is not None else None
    open_rows = readings.open_incidents(target_id=target_id) if state in ("open", "all") else []
    history = None
    if state in ("resolved", "all"):
        history = Paginator(readings.incident_history(target_id=target_id, state="resolved"), PER_PAGE).get_page(
            form.cleaned_data["page"]
        )
    query = {"state": state, **({"target": target_id} if target_id else {})}
    return render(
        request,
        "incidents/list.html",
        {
            "form": form,
            "open_rows": open_rows,
            "history": history,
            "state": state,
            "page_query": urlencode(query),
        },
    )


@incident_page
def incident_detail(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = readings.incident_detail(incident_id)
    if incident is None:
        raise Http404(_("No such incident."))
    now = timezone.now()
    back = reverse("incident", args=[incident.id])
    queries = chart_queries(incident, now)
    context = {
        "incident": incident,
        "timeline": readings.timeline(incident.id),
        "timeseries_api": reverse("api-timeseries"),
        "phases_api": reverse("api-phases"),
        "timeseries_query": queries["timeseries"],
        "phases_query": queries["phases"],
        # Plotly's date axis reads UTC times without an offset (latency.charts.over_time.plotly_time).
        "mark_from": plotly_time(incident.started_at),
        "mark_until": plotly_time(incident.resolved_at or now),
        "chart_metric_is_rule_metric": is_latency(incident.metric),
        "may_acknowledge": incident.acknowledged_at is None and request.user.has_perm(ACKNOWLEDGE_PERMISSION),
        **update_context(request, incident.id),
        **silence_context(request, incident.target_id, back, now),
    }
    return render(request, "incidents/detail.html", context)


def update_context(request: HttpRequest, incident_id: int, form: IncidentUpdateForm | None = None) -> dict:
    """The public updates block: the updates so far, and the form for those who may post one."""
    may_post = request.user.has_perm(UPDATE_PERMISSION)
    return {
        "updates": readings.updates(incident_id),
        "update_form": (form or IncidentUpdateForm()) if may_post else None,
    }


@incident_action(UPDATE_PERMISSION)
def post_update(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=incident_id)
    form = IncidentUpdateForm(request.POST)
    if not form.is_valid():
        context = {"incident_id": incident.pk, **update_context(request, incident.pk, form)}
        return render(request, "incidents/update.html", context, status=400)
    IncidentUpdate.objects.create(
        incident=incident,
        status=form.cleaned_data["status"],
        text=form.cleaned_data["text"],
        posted_at=timezone.now(),
        posted_by=request.user,
    )
    messages.success(request, _("Update posted: status pages showing this incident show it now."))
    return HttpResponseRedirect(reverse("incident", args=[incident.pk]))


@incident_action(ACKNOWLEDGE_PERMISSION)
def acknowledge(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident = get_object_or_404(Incident, pk=incident_id)
    now = timezone.now()
    with transaction.atomic():
        # Compare-and-swap: of two clicks (or two people) at once, one UPDATE finds the row unacknowledged.
        won = Incident.objects.filter(pk=incident.pk, acknowledged_at__isnull=True).update(
            acknowledged_at=now, acknowledged_by=request.user
        )
        if won:
            IncidentEvent.objects.create(incident=incident, at=now, kind=IncidentEvent.ACKNOWLEDGED, user=request.user)
    if won:
        messages.success(request, _("Incident acknowledged."))
    else:
        messages.info(request, _("This incident was already acknowledged."))
    return HttpResponseRedirect(reverse("incident", args=[incident.pk]))


@incident_action(SILENCE_PERMISSION)
def silence_target(request: HttpRequest, target_id: int) -> HttpResponse:
    target = get_object_or_404(Target, pk=target_id)
    now = timezone.now()
    form = SilenceForm(request.POST, now=now, host=request.get_host())
    if not form.is_valid():
        return render(request, "incidents/silence.html", {"target": target, "silence_form": form}, status=400)
    data = form.cleaned_data
    silence = Silence.objects.create(
        target=target, starts_at=now, ends_at=data["ends_at"], reason=data["reason"], created_by=request.user
    )
    messages.success(
        request,
        _("%(target)s is silenced until %(end)s UTC.")
        % {"target": target.name, "end": f"{silence.ends_at:%Y-%m-%d %H:%M}"},
    )
    return HttpResponseRedirect(data["next"] or reverse("target", args=[target.pk]))


@incident_action(END_SILENCE_PERMISSION)
def end_silence(request: HttpRequest, silence_id: int) -> HttpResponse:
    silence = get_object_or_404(Silence, pk=silence_id)
    form = BackForm(request.POST, host=request.get_host())
    back = (form.cleaned_data["next"] if form.is_valid() else "") or reverse("target", args=[silence.target_id])
    now = timezone.now()
    # Compare-and-swap on ends_at: a silence ends once. One that has not begun yet is ended by removing it
    # (its end cannot come before its start).
    ended = Silence.objects.filter(pk=silence.pk, ends_at__gt=now, starts_at__lt=now).update(ends_at=now)
    if not ended:
        ended, _deleted = Silence.objects.filter(pk=silence.pk, starts_at__gte=now).delete()
    if not ended:
        return HttpResponse(_("This silence has already ended."), status=409, content_type="text/plain")
    messages.success(request, _("The silence of %(target)s has ended.") % {"target": silence.target.name})
    return HttpResponseRedirect(back)
