"""The admin's permissions, for the API: reading needs the model's view permission, writing its add, change or
delete permission (Django's model permissions, as the admin checks them).

Read-only endpoints that are not one model's list name the model their figures come from (aggregates and
measurements: probes.view_measurement; incidents: probes.view_incident; workers: probes.view_worker)."""

from __future__ import annotations

from rest_framework.permissions import DjangoModelPermissions

VIEW = ["%(app_label)s.view_%(model_name)s"]


class ModelPermissions(DjangoModelPermissions):
    """DRF's DjangoModelPermissions with view permissions for reads (its own lets any signed-in user read)."""

    perms_map = {**DjangoModelPermissions.perms_map, "GET": VIEW, "HEAD": VIEW}
