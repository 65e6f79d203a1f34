"""Notifications: one Delivery (an incident's transition to one channel) sent through Apprise.

The evaluator creates the Delivery rows in the transaction that moved an
incident and, after it commits, calls `queue()`: one `probes.deliver_notification`
task per delivery on the maintenance queue, signed as the central side's
(probes.fleet.maintenance). The task calls `deliver()`, which claims the row
with a compare-and-swap, sends, and records the attempt on the incident's
timeline and in the channel's health. A failed attempt raises
NotificationFailed and the task retries with backoff; the row counts the
attempts, so after MAX_ATTEMPTS it is failed for good. An attempt the address
policy refused (the channel leads to an internal address:
probes.alerts.addresses) fails for good at once: no retry changes it. A redelivered or
duplicated task finds the row sent (or claimed by another run) and sends
nothing.

A channel's URL holds its secrets. Nothing of it is logged or stored by this
module: Apprise's captured log, the only explanation of a failure, has the URL
and every part of it scrubbed out (`scrub`) before it is kept anywhere; the
`apprise` logger itself writes nowhere (settings.LOGGING).
"""

from __future__ import annotations

import logging
import random
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qsl, quote, unquote, unquote_plus, urlsplit

import apprise
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.urls import NoReverseMatch, reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from probes.alerts import wording
from probes.alerts.addresses import guarded, refusal
from probes.alerts.models import PAGE, Delivery, Incident, IncidentEvent, NotificationChannel
from probes.alerts.secrets import UnreadableURL, decrypt_url

log = logging.getLogger(__name__)

TASK = "probes.deliver_notification"
MAX_ATTEMPTS = 6  # probes.tasks.deliver_notification retries this many times less one
# Seconds: one attempt's limits. Apprise gives up on the service first, the
# task's soft limit next; the claim outlasts both, so a second run cannot take
# a delivery that is still being sent.
# (probes.tasks.deliver_notification: soft limit 80 s, hard 90 s.)
SEND_TIMEOUT_S = 60
CLAIM = timedelta(minutes=2)
# Longer than every attempt with its backoff together (6 attempts, waits of at most 30 to 300 s).
STRANDED_AFTER = timedelta(minutes=30)
# The first wait between attempts; each next one doubles, up to
# settings.LATENCY_NOTIFY_RETRY_BACKOFF_MAX.
FIRST_BACKOFF_S = 30.0

SENT = "sent"
FAILED = "failed"
SKIPPED = "skipped"

REDACTED = "***"
_LEVELS = logging.getLevelNamesMapping()
_EXCEPTION_LINE = re.compile(r"^\w+ Exception: ")
_REASON_CHARS = 500


class NotificationFailed(Exception):
    """One attempt failed and another is due; the message is already scrubbed."""


# --- queueing and backoff ---------------------------------------------------------------------


def queue(delivery_ids: list[int]) -> None:
    """Send one delivery task per id (call it after the transaction that created them commits)."""
    from probes.celery_app import site_app
    from probes.fleet.maintenance import central_token

    # Sent by name through the site's own app (its routes put it on the maintenance queue), not
    # through the task's proxy, which follows whichever Celery app was made last in the process.
    app = site_app()
    for delivery_id in delivery_ids:
        app.send_task(TASK, kwargs={"delivery_id": delivery_id, "token": central_token(TASK)}, retry=True)


def stranded(now: datetime | None = None) -> list[int]:
    """Deliveries whose task is gone: claimed by a run that died (a worker killed without the message
    coming back, the database lost mid-way), or pending long after every retry would have run.
    Queueing them again is safe: the claim lets one run send, and a sent delivery is skipped."""
    now = now or timezone.now()
    return list(
        Delivery.objects.filter(
            Q(state=Delivery.SENDING, claimed_until__lt=now)
            | Q(state=Delivery.PENDING, attempts__lt=MAX_ATTEMPTS, created_at__lt=now - STRANDED_AFTER)
        )
        .order_by("id")
        .values_list("id", flat=True)
    )


def retry_countdown(retries: int) -> float:
    """Seconds before the next attempt after `retries` retries: exponential, capped, with jitter
    (half fixed, half random) so a channel that came back is not hit by every delivery at once."""
    cap = float(settings.LATENCY_NOTIFY_RETRY_BACKOFF_MAX)
    delay = min(cap, min(FIRST_BACKOFF_S, cap) * 2**retries)
    return delay / 2 + random.uniform(0, delay / 2)


# --- keeping the URL out of everything ----------------------------------------------------------

_DELIMITERS = re.compile(r"[/:@?&=#;,+\s]+")


def _url_parts(url: str) -> set[str]:
    """The URL and every piece of it that could be a secret: user, password, host, port, path
    segments, query values, fragment, raw and decoded."""
    parts = {url, unquote(url)}
    rest = url.split("://", 1)[1] if "://" in url else url
    # Query keys are option names (mode, from, to, -X-Header); their values are what is secret.
    keys = {key.strip(" +-:") for key, _value in parse_qsl(urlsplit(url).query, keep_blank_values=True)}
    for text in (rest, unquote(rest), unquote_plus(rest)):
        for token in _DELIMITERS.split(text):
            if token and token.strip(" +-:") not in keys:
                parts.update({token, unquote(token), quote(token, safe="")})
    return {part for part in parts if part}


def scrub(text: str, url: str) -> str:
    """`text` with the URL and each of its parts replaced by ***."""
    for part in sorted(_url_parts(url), key=len, reverse=True):
        if len(part) >= 4:
            text = re.sub(re.escape(part), REDACTED, text, flags=re.IGNORECASE)
        else:
            # A short part (a port, a one-letter user) only where it stands alone, not inside words.
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(part)}(?![A-Za-z0-9])", REDACTED, text)
    return text


# --- sending -----------------------------------------------------------------------------------


def notify_type(transition: str) -> str:
    """Apprise's type of a delivery's message: services that show one (a red or green mark, an icon, the
    webhook's `type` field) show an opening as a failure and a resolution as a success."""
    return apprise.NotifyType.SUCCESS if transition == Delivery.RESOLVED else apprise.NotifyType.FAILURE


def _send(url: str, title: str, body: str, kind: str = apprise.NotifyType.INFO) -> tuple[str | None, bool]:
    """Send through Apprise as a message of Apprise's type `kind`: (None, False) when it was accepted, else (why
    not, not yet scrubbed; whether the address policy refused it, which no retry changes)."""
    notifier = apprise.Apprise()
    if not notifier.add(url):
        return _("Apprise does not understand this URL (its form or a value in it); enter it again."), False
    # The result holds this call's own log capture: Apprise keeps it apart from other threads'
    # sends, which a handler on the shared `apprise` logger (LogCapture) would not. The warnings say
    # what failed; of the debug lines only the exceptions are kept ("Socket Exception: ... Connection
    # refused"), which say why. Every address the send reaches is checked as it connects (guarded).
    with (
        guarded() as guard,
        notifier.notify(
            title=title, body=body, notify_type=kind, timeout=SEND_TIMEOUT_S, log_level=logging.DEBUG
        ) as result,
    ):
        # Refused even when another address of the service took the message: the channel reached for an
        # internal one.
        if guard.refused:
            return refusal(guard.refused), True
        if result:
            return None, False
        lines = [
            entry.message
            for entry in result.logs()
            if _LEVELS.get(entry.level, logging.WARNING) >= logging.WARNING or _EXCEPTION_LINE.match(entry.message)
        ]
        if result.status == apprise.AppriseResultStatus.TIMEOUT:
            lines.append(_("no answer within %(seconds)d s") % {"seconds": SEND_TIMEOUT_S})
    return " ".join(lines) or _("Apprise reported a failure without a reason."), False


def _reason(raw: str, url: str) -> str:
    text = scrub(raw, url)
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"


def _utc(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if moment else ""


def incident_link(incident: Incident) -> str:
    """The incident page, absolute under settings.LATENCY_SITE_URL when set; "" when the site has no
    such page."""
    try:
        path = reverse("incident", args=[incident.pk])
    except NoReverseMatch:
        return ""
    return f"{settings.LATENCY_SITE_URL}{path}"


def language_of(channel: NotificationChannel | None) -> str:
    """The language a channel's notifications are written in: its own when set, else the site's."""
    return (channel.language if channel is not None else "") or settings.LANGUAGE_CODE


def message(incident: Incident, transition: str, channel: NotificationChannel | None = None) -> tuple[str, str]:
    """(title, body) of the notification of `transition` ("opened" or "resolved") of `incident`,
    in the channel's language (language_of)."""
    with translation.override(language_of(channel)):
        regions = ", ".join(region.name for region in incident.regions.order_by("name"))
        values = {
            "rule": incident.source_name,
            "target": incident.target.name,
            "scope": incident.get_scope_display(),
        }
        if transition == Delivery.RESOLVED:
            title = _("[RESOLVED] %(rule)s: %(target)s (%(scope)s)") % values
        elif incident.objective_id is not None and incident.severity == PAGE:
            # An objective's burn-rate alert says how urgent it is: a page, or a ticket for working hours.
            title = _("[PAGE] %(rule)s: %(target)s (%(scope)s)") % values
        elif incident.objective_id is not None:
            title = _("[TICKET] %(rule)s: %(target)s (%(scope)s)") % values
        else:
            title = _("[FIRING] %(rule)s: %(target)s (%(scope)s)") % values
        lines = [wording.readable(incident.summary_data, incident.summary), ""]
        if regions:
            lines.append(_("Regions: %(regions)s") % {"regions": regions})
        lines.append(_("Started: %(at)s") % {"at": _utc(incident.started_at)})
        if incident.resolved_at is not None:
            lines.append(_("Resolved: %(at)s") % {"at": _utc(incident.resolved_at)})
        link = incident_link(incident)
        if link:
            lines.append(_("Incident: %(link)s") % {"link": link})
    return title, "\n".join(lines)


def _channel_name(channel: NotificationChannel) -> str:
    return f"“{channel.name}” ({channel.service})"


def _record_health(channel_id: int, now: datetime, reason: str | None) -> None:
    # F() expressions: deliveries to one channel finish in several workers at once.
    channels = NotificationChannel.objects.filter(pk=channel_id)
    if reason is None:
        channels.update(consecutive_failures=0, last_success_at=now)
    else:
        channels.update(
            consecutive_failures=F("consecutive_failures") + 1, last_failure_at=now, last_error=reason[:500]
        )


def _claim(delivery_id: int, now: datetime) -> Delivery | None:
    claimed = (
        Delivery.objects.filter(pk=delivery_id)
        .filter(Q(state=Delivery.PENDING) | Q(state=Delivery.SENDING, claimed_until__lt=now))
        .update(state=Delivery.SENDING, claimed_until=now + CLAIM, attempts=F("attempts") + 1)
    )
    if not claimed:
        return None
    return Delivery.objects.select_related("incident__rule", "incident__objective", "incident__target", "channel").get(
        pk=delivery_id
    )


def deliver(delivery_id: int) -> str:
    """Send one delivery, once. Returns SENT, FAILED (for good: no attempt left, or one that cannot
    succeed) or SKIPPED (already sent, failed, withheld, gone, or being sent by another run). Raises
    NotificationFailed when this attempt failed and another is due."""
    delivery = _claim(delivery_id, timezone.now())
    if delivery is None:
        return SKIPPED
    channel, incident, attempt = delivery.channel, delivery.incident, delivery.attempts

    retry = True
    try:
        url = decrypt_url(channel.apprise_url)
    except UnreadableURL as unreadable:
        url, raw, retry = "", str(unreadable), False
    else:
        if not channel.enabled:
            raw, retry = _("the channel was disabled before the notification was sent"), False
        else:
            title, body = message(incident, delivery.transition, channel)
            raw, final = _send(url, title, body, notify_type(delivery.transition))
            retry = not final
    reason = None if raw is None else _reason(raw, url)

    now = timezone.now()
    last = reason is not None and (not retry or attempt >= MAX_ATTEMPTS)
    with transaction.atomic():
        mine = Delivery.objects.filter(pk=delivery.pk, state=Delivery.SENDING, attempts=attempt)
        if reason is None:
            mine.update(state=Delivery.SENT, sent_at=now, claimed_until=None, last_error="")
            data: dict = {"say": "sent", "channel": _channel_name(channel)}
            kind = IncidentEvent.NOTIFIED
        else:
            mine.update(state=Delivery.FAILED if last else Delivery.PENDING, claimed_until=None, last_error=reason)
            data = {
                "say": "attempt_failed",
                "channel": _channel_name(channel),
                "reason": reason,
                "attempt": attempt,
                "last": last,
            }
            kind = IncidentEvent.NOTIFICATION_FAILED
        # Stored in the language active here (the site's), and as data each reader's page renders in theirs.
        IncidentEvent.objects.create(
            incident=incident,
            at=now,
            kind=kind,
            channel=channel,
            attempt=attempt,
            detail=wording.event_text(data, ""),
            detail_data=data,
        )
        if channel.enabled or reason is None:
            _record_health(channel.pk, now, reason)

    if reason is None:
        log.info(
            "%s notification of incident %d sent to channel %d %s (attempt %d)",
            delivery.transition,
            incident.pk,
            channel.pk,
            _channel_name(channel),
            attempt,
        )
        return SENT
    log.warning(
        "%s notification of incident %d to channel %d %s failed (attempt %d of %d): %s",
        delivery.transition,
        incident.pk,
        channel.pk,
        _channel_name(channel),
        attempt,
        MAX_ATTEMPTS,
        reason,
    )
    if last:
        return FAILED
    raise NotificationFailed(reason)


def send_test(channel: NotificationChannel) -> tuple[bool, str]:
    """Send a test notification to `channel` (the admin's action): (sent, what happened). The
    outcome counts in the channel's health like a delivery's."""
    try:
        url = decrypt_url(channel.apprise_url)
    except UnreadableURL as unreadable:
        return False, str(unreadable)
    with translation.override(language_of(channel)):
        title = _("Latency Atlas: test notification")
        body = _("This is a test of the notification channel “%(name)s”. Alerts will arrive here.") % {
            "name": channel.name
        }
    raw, _final = _send(url, title, body)
    reason = None if raw is None else _reason(raw, url)
    _record_health(channel.pk, timezone.now(), reason)
    if reason is None:
        log.info("test notification sent to channel %d %s", channel.pk, _channel_name(channel))
        return True, _("Sent a test notification to %(channel)s.") % {"channel": _channel_name(channel)}
    log.warning("test notification to channel %d %s failed: %s", channel.pk, _channel_name(channel), reason)
    return False, _("The test notification to %(channel)s failed: %(reason)s") % {
        "channel": _channel_name(channel),
        "reason": reason,
    }
