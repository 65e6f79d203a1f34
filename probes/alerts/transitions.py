"""What a move of an alert's state writes, the same for a rule's evaluator (probes.alerts.evaluate) and an
objective's (probes.slos.alerts): the compare-and-swap of the state row, the deliveries of a transition, the
timeline's regions joined and left and its withheld lines, and the deliveries' queueing after commit."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from django.db.models import F, Model

from probes.alerts.models import Delivery, Incident, IncidentEvent, NotificationChannel, Silence


def swap(state: Model, **changes) -> bool:
    """Compare-and-swap the state row on its version: True when this pass moved it (another pass that moved it
    first wins, and this one writes nothing)."""
    moved = (
        type(state)
        ._default_manager.filter(pk=state.pk, version=state.version)
        .update(version=F("version") + 1, **changes)
    )
    return moved == 1


def deliveries(
    incident: Incident, transition: str, now: datetime, withheld: bool, channels: Iterable[NotificationChannel]
) -> list[int]:
    """One Delivery per channel (at most one per incident, transition and channel); the ids to send: none when
    withheld (inside a silence: recorded, not sent)."""
    rows = [
        Delivery(
            incident=incident,
            transition=transition,
            channel=channel,
            created_at=now,
            state=Delivery.WITHHELD if withheld else Delivery.PENDING,
        )
        for channel in channels
    ]
    if not rows:
        return []
    Delivery.objects.bulk_create(rows, ignore_conflicts=True)
    if withheld:
        return []
    return list(
        Delivery.objects.filter(incident=incident, transition=transition, state=Delivery.PENDING).values_list(
            "id", flat=True
        )
    )


def region_events(
    incident: Incident, at: datetime, before: set[int], after: set[int], names: Mapping[int, str]
) -> list[IncidentEvent]:
    """The timeline's lines for the regions that joined (in after, not before) and left (the other way)."""
    return [
        IncidentEvent(incident=incident, at=at, kind=kind, region_id=region_id, detail=names.get(region_id, ""))
        for kind, ids in ((IncidentEvent.REGION_JOINED, after - before), (IncidentEvent.REGION_LEFT, before - after))
        for region_id in sorted(ids)
    ]


def record_opened(incident: Incident, at: datetime, summary: str, summary_data: dict, silence: Silence | None) -> None:
    """The timeline's first lines of a new incident: opened, with its summary (words and the data the reader's
    language words again), and withheld when it opened inside a silence."""
    events = [
        IncidentEvent(
            incident=incident,
            at=at,
            kind=IncidentEvent.OPENED,
            detail=summary,
            detail_data={"say": "summary", "summary": summary_data},
        )
    ]
    if silence is not None:
        events.append(withheld_event(incident, at, silence))
    IncidentEvent.objects.bulk_create(events)


def withheld_event(incident: Incident, at: datetime, silence: Silence) -> IncidentEvent:
    """The timeline's line for a transition nobody was told of: the silence it fell in."""
    until = f"{silence.ends_at:%Y-%m-%d %H:%M}"
    return IncidentEvent(
        incident=incident,
        at=at,
        kind=IncidentEvent.WITHHELD,
        detail=f"silenced until {until} UTC" + (f": {silence.reason}" if silence.reason else ""),
        detail_data={"say": "silenced_until", "until": until, "reason": silence.reason},
    )


def queue(delivery_ids: list[int]) -> None:
    """Send the deliveries (call on commit of the transaction that wrote them)."""
    if delivery_ids:
        from probes.alerts import notify

        notify.queue(delivery_ids)
