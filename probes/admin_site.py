"""The admin's index in three groups instead of Django's one per app: what an administrator configures (targets,
probes, regions, rules, channels, model groups, objectives, ingest sources, silences), what the site records
(measurements and their rollups, dead letters, incidents and deliveries, workers and their beats, missed runs,
objectives' hourly counts), and who may do what (users, groups, API tokens, the keys of the regions and of the
site). Every model of the probes app sits in one list in Django's grouping, configuration beside a hundred million
rows; an administrator looks for the one or the other.

Set as the default admin site by latency.apps.LatencyAdminConfig (INSTALLED_APPS), Django's documented way to
replace it; a model this module does not name lands in Configuration, where a new thing to edit belongs."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

RECORDS = frozenset(
    {
        "probes.measurement",
        "probes.hourlyrollup",
        "probes.deadletter",
        "probes.incident",
        "probes.delivery",
        "probes.worker",
        "probes.workerbeat",
        "probes.missedrun",
        "probes.slohourcount",
    }
)
ACCESS = frozenset(
    {
        "auth.user",
        "auth.group",
        "probes.apitoken",
        "probes.regionkey",
        "probes.centralkey",
        "axes.accessattempt",
        "axes.accessfailurelog",
        "axes.accesslog",
    }
)
GROUPS = (
    ("configuration", _("Configuration")),
    ("records", _("Records")),
    ("access", _("Users and access")),
)


def group_of(app_label: str, object_name: str) -> str:
    key = f"{app_label}.{object_name.lower()}"
    if key in RECORDS:
        return "records"
    if key in ACCESS or app_label in ("auth", "axes"):
        return "access"
    return "configuration"


class LatencyAdminSite(admin.AdminSite):
    def get_app_list(self, request: Any, app_label: str | None = None) -> list[dict[str, Any]]:
        apps = super().get_app_list(request, app_label)
        if app_label is not None:
            # An app's own index page (/admin/probes/) lists that app, as Django does.
            return apps
        grouped: dict[str, list[dict[str, Any]]] = {key: [] for key, _name in GROUPS}
        for app in apps:
            for model in app["models"]:
                grouped[group_of(app["app_label"], model["object_name"])].append(model)
        return [
            {
                "name": name,
                "app_label": key,
                # No page of its own: the group's models link to their lists.
                "app_url": "",
                "has_module_perms": True,
                "models": sorted(grouped[key], key=lambda m: str(m["name"])),
            }
            for key, name in GROUPS
            if grouped[key]
        ]
