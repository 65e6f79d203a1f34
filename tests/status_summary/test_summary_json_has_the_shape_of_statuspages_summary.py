"""/status/<slug>/api/v2/summary.json in the shape of Atlassian Statuspage's summary endpoint, checked against a
JSON Schema of that shape (written from Statuspage's public API reference: the fields an aggregator reads, their
types and their values): the page, a component per target, the indicator, the unresolved incidents with their
public updates newest first, and maintenance not yet completed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import jsonschema

from probes.models import StatusPage
from tests.factories import IncidentFactory, IncidentUpdateFactory, SilenceFactory

TIME = {"type": "string", "format": "date-time"}
MAYBE_TIME = {"type": ["string", "null"], "format": "date-time"}
COMPONENT = {
    "type": "object",
    "required": ["id", "name", "status", "created_at", "updated_at", "position", "page_id", "group", "group_id"],
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "status": {
            "enum": ["operational", "degraded_performance", "partial_outage", "major_outage", "under_maintenance"]
        },
        "created_at": TIME,
        "updated_at": TIME,
        "position": {"type": "integer"},
        "page_id": {"type": "string"},
        "group": {"type": "boolean"},
        "group_id": {"type": ["string", "null"]},
    },
}
UPDATE = {
    "type": "object",
    "required": ["id", "status", "body", "incident_id", "created_at", "updated_at", "display_at"],
    "properties": {
        "id": {"type": "string"},
        "status": {
            "enum": [
                "investigating",
                "identified",
                "monitoring",
                "resolved",
                "postmortem",
                "scheduled",
                "in_progress",
                "verifying",
                "completed",
            ]
        },
        "body": {"type": "string"},
        "incident_id": {"type": "string"},
        "created_at": TIME,
        "updated_at": TIME,
        "display_at": TIME,
    },
}
INCIDENT = {
    "type": "object",
    "required": [
        "id",
        "name",
        "status",
        "created_at",
        "updated_at",
        "monitoring_at",
        "resolved_at",
        "impact",
        "shortlink",
        "started_at",
        "page_id",
        "incident_updates",
        "components",
    ],
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "status": {"enum": ["investigating", "identified", "monitoring", "resolved", "postmortem"]},
        "created_at": TIME,
        "updated_at": TIME,
        "monitoring_at": MAYBE_TIME,
        "resolved_at": MAYBE_TIME,
        "impact": {"enum": ["none", "minor", "major", "critical"]},
        "shortlink": {"type": "string"},
        "started_at": TIME,
        "page_id": {"type": "string"},
        "incident_updates": {"type": "array", "items": UPDATE},
        "components": {"type": "array", "items": COMPONENT},
    },
}
MAINTENANCE = {
    **INCIDENT,
    "required": [*INCIDENT["required"], "scheduled_for", "scheduled_until"],
    "properties": {
        **INCIDENT["properties"],
        "status": {"enum": ["scheduled", "in_progress", "verifying", "completed"]},
        "impact": {"enum": ["maintenance", "none", "minor", "major", "critical"]},
        "scheduled_for": TIME,
        "scheduled_until": TIME,
    },
}
SUMMARY = {
    "type": "object",
    "required": ["page", "components", "incidents", "scheduled_maintenances", "status"],
    "properties": {
        "page": {
            "type": "object",
            "required": ["id", "name", "url", "time_zone", "updated_at"],
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "url": {"type": "string"},
                "time_zone": {"type": "string"},
                "updated_at": TIME,
            },
        },
        "components": {"type": "array", "items": COMPONENT},
        "incidents": {"type": "array", "items": INCIDENT},
        "scheduled_maintenances": {"type": "array", "items": MAINTENANCE},
        "status": {
            "type": "object",
            "required": ["indicator", "description"],
            "properties": {
                "indicator": {"enum": ["none", "minor", "major", "critical"]},
                "description": {"type": "string"},
            },
        },
    },
}


def _summary(client, slug: str = "acme") -> dict:
    response = client.get(f"/status/{slug}/api/v2/summary.json")
    assert response.status_code == 200
    body = response.json()
    jsonschema.validate(body, SUMMARY, format_checker=jsonschema.FormatChecker())
    return body


def test_an_operational_page(scene, client):
    body = _summary(client)
    assert body["status"] == {"indicator": "none", "description": "All Systems Operational"}
    assert [(c["name"], c["status"]) for c in body["components"]] == [("chat-eu", "operational")]
    assert body["page"]["url"] == "http://testserver/status/acme/"
    assert body["incidents"] == [] and body["scheduled_maintenances"] == []


def test_an_outage_with_an_incident_its_updates_and_maintenance(scene, client):
    now = datetime.now(UTC)
    scene.calls(now - timedelta(hours=1), now, good=60, bad=60)
    incident = IncidentFactory(target=scene.target, scope="global", regions=scene.regions)
    IncidentUpdateFactory(
        incident=incident, status="investigating", text="Looking.", posted_at=now - timedelta(minutes=9)
    )
    IncidentUpdateFactory(
        incident=incident, status="identified", text="Found it.", posted_at=now - timedelta(minutes=2)
    )
    IncidentFactory(target=scene.target, resolved_at=now - timedelta(days=1))  # resolved: not listed
    SilenceFactory(
        target=scene.target,
        public=True,
        reason="Provider upgrade",
        starts_at=now + timedelta(hours=2),
        ends_at=now + timedelta(hours=3),
    )

    body = _summary(client)
    assert body["status"]["indicator"] == "major"
    assert body["components"][0]["status"] == "major_outage"
    [listed] = body["incidents"]
    assert (listed["status"], listed["impact"]) == ("identified", "major")
    assert [u["body"] for u in listed["incident_updates"]] == ["Found it.", "Looking."]
    assert listed["components"][0]["id"] == body["components"][0]["id"]
    [maintenance] = body["scheduled_maintenances"]
    assert (maintenance["name"], maintenance["status"]) == ("Provider upgrade", "scheduled")


def test_a_page_that_is_not_public_has_no_summary_for_anyone_signed_out(scene, client):
    StatusPage.objects.filter(id=scene.page.id).update(public=False)
    assert client.get("/status/acme/api/v2/summary.json").status_code == 404
