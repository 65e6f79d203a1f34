"""/status/<slug>/api/v2/summary.json: a status page in the shape of Atlassian Statuspage's summary
(https://developer.statuspage.io, "Summary"), so status aggregators and dashboards that read Statuspage read ours:
the page, a component per target, the overall indicator, unresolved incidents with their public updates, and
maintenance not yet completed. Built from probes.readings.status's reading alone, so it says nothing the page
does not."""

from __future__ import annotations

from datetime import datetime

from probes.readings import status

COMPONENT_STATUS = {"operational": "operational", "degraded": "degraded_performance", "outage": "major_outage"}
INDICATOR = {"operational": "none", "degraded": "minor", "outage": "major"}
DESCRIPTION = {
    "operational": "All Systems Operational",
    "degraded": "Minor Service Outage",
    "outage": "Major Service Outage",
}


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat().replace("+00:00", "Z")


def _component_id(target_id: int) -> str:
    return f"target-{target_id}"


def summary(reading: status.StatusReading, page_url: str, updated_at: datetime) -> dict:
    page_id = reading.slug
    maintaining = {m.target_id for m in reading.maintenance if m.starts_at <= reading.read_at < m.ends_at}
    components = [
        {
            "id": _component_id(t.target_id),
            "name": t.name,
            "status": "under_maintenance" if t.target_id in maintaining else COMPONENT_STATUS[t.status],
            "created_at": _iso(updated_at),
            "updated_at": _iso(reading.read_at),
            "position": position,
            "description": None,
            "showcase": True,
            "start_date": None,
            "group_id": None,
            "page_id": page_id,
            "group": False,
            "only_show_if_degraded": False,
        }
        for position, t in enumerate(reading.targets, start=1)
    ]
    by_id = {c["id"]: c for c in components}
    incidents = [_incident(i, page_id, page_url, by_id) for i in reading.incidents if i.resolved_at is None]
    maintenances = [
        _maintenance(m, page_id, page_url, by_id, reading.read_at)
        for m in reading.maintenance
        if m.ends_at > reading.read_at
    ]
    return {
        "page": {
            "id": page_id,
            "name": reading.title,
            "url": page_url,
            "time_zone": "Etc/UTC",
            "updated_at": _iso(reading.read_at),
        },
        "components": components,
        "incidents": incidents,
        "scheduled_maintenances": maintenances,
        "status": {"indicator": INDICATOR[reading.status], "description": DESCRIPTION[reading.status]},
    }


def _incident(i: status.PublicIncident, page_id: str, page_url: str, components: dict) -> dict:
    latest = i.updates[-1].status if i.updates else "investigating"
    affected = [components[_component_id(i.target_id)]] if _component_id(i.target_id) in components else []
    return {
        "id": f"incident-{i.id}",
        "name": f"{i.target_name}: degraded performance",
        "status": latest,
        "created_at": _iso(i.started_at),
        "updated_at": _iso(i.updates[-1].posted_at if i.updates else i.started_at),
        "monitoring_at": _iso(next((u.posted_at for u in i.updates if u.status == "monitoring"), None)),
        "resolved_at": _iso(i.resolved_at),
        "impact": "major" if i.global_scope else "minor",
        "shortlink": f"{page_url}#incident-{i.id}",
        "started_at": _iso(i.started_at),
        "page_id": page_id,
        "incident_updates": [
            {
                "id": f"update-{u.id}",
                "status": u.status,
                "body": u.text,
                "incident_id": f"incident-{i.id}",
                "created_at": _iso(u.posted_at),
                "updated_at": _iso(u.posted_at),
                "display_at": _iso(u.posted_at),
                "affected_components": None,
            }
            for u in reversed(i.updates)  # newest first, as Statuspage lists them
        ],
        "components": affected,
    }


def _maintenance(m: status.Maintenance, page_id: str, page_url: str, components: dict, now: datetime) -> dict:
    state = "in_progress" if m.starts_at <= now else "scheduled"
    affected = [components[_component_id(m.target_id)]] if _component_id(m.target_id) in components else []
    return {
        "id": f"maintenance-{m.id}",
        "name": m.reason or f"{m.target_name}: maintenance",
        "status": state,
        "created_at": _iso(m.starts_at),
        "updated_at": _iso(m.starts_at),
        "monitoring_at": None,
        "resolved_at": None,
        "impact": "maintenance",
        "shortlink": f"{page_url}#status-maintenance",
        "started_at": _iso(m.starts_at),
        "page_id": page_id,
        "incident_updates": [],
        "components": affected,
        "scheduled_for": _iso(m.starts_at),
        "scheduled_until": _iso(m.ends_at),
    }
