"""Errors as the API answers them: DRF's own, plus a deletion the database refuses because rows still point at
the object (a target with probes, a region with measurements): 409 naming what holds it, as the admin does."""

from __future__ import annotations

from django.db.models import PROTECT, RESTRICT, ProtectedError, RestrictedError
from django.utils.translation import gettext as _
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "protected"


def _refused(kinds: list[str]) -> str:
    return _("Cannot delete it: %(kinds)s still refer to it; delete or move them first.") % {"kinds": ", ".join(kinds)}


def refuse_if_protected(instance) -> None:
    """Conflict (409) naming the kinds of rows that still point at `instance` through a protecting foreign key.
    Asked one EXISTS per relation before deleting: Django's own refusal (ProtectedError) first loads every row in
    the way, and a region can have millions of measurements."""
    kinds = []
    for rel in instance._meta.related_objects:
        if rel.many_to_many or getattr(rel, "on_delete", None) not in (PROTECT, RESTRICT):
            continue
        if rel.related_model._base_manager.filter(**{rel.field.name: instance}).exists():
            kinds.append(str(rel.related_model._meta.verbose_name_plural))
    if kinds:
        raise Conflict(_refused(sorted(set(kinds))))


def exception_handler(exc, context):
    if isinstance(exc, ProtectedError | RestrictedError):
        # A row that appeared after refuse_if_protected() looked.
        objs = exc.protected_objects if isinstance(exc, ProtectedError) else exc.restricted_objects
        kinds = sorted({str(obj._meta.verbose_name_plural) for obj in objs})
        return Response({"detail": _refused(kinds)}, status=status.HTTP_409_CONFLICT)
    return drf_exception_handler(exc, context)
