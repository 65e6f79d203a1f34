"""The API's query parameters, as the site's forms (latency.forms) with what does not apply left out, so a
parameter means the same and is refused with the same message in the API, the pages and the exports."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from rest_framework.exceptions import ValidationError as RequestError

from latency.forms import DashboardFilterForm, ExportFilterForm, Ids, Once, ParamsForm, WorkersForm
from probes.models import Target
from probes.readings.incidents import STATES
from probes.readings.selection import BadParameter


class AggregateForm(DashboardFilterForm):
    """The dashboard's selection (target, region, window or since/until, metric, percentile), without the
    options of its charts."""

    over_time = None
    layer = None


class MeasurementForm(ExportFilterForm):
    """The exports' filters (target, probe, region, outcome; since and until, the last 24 hours by default);
    no buckets: rows are listed one by one."""

    bucket = None


class IncidentForm(ParamsForm):
    """Incidents: of one target (an id) or all; open, resolved or all of them (the default)."""

    target = Ids(Target)
    state = Once(choices=STATES, default="all")

    def clean_target(self) -> int | None:
        ids = self.cleaned_data["target"]
        if len(ids) > 1:
            raise ValidationError(_("%(param)s must be given once") % {"param": "target"})
        return ids[0] if ids else None

    def build(self) -> tuple[int | None, str]:
        return self.cleaned_data["target"], self.cleaned_data["state"]


def parsed(form: ParamsForm):
    """The form's result, or DRF's 400 naming the parameter: {"<param>": ["<message>"]}."""
    try:
        return form.result()
    except BadParameter as exc:
        raise RequestError({exc.param: [str(exc)]}) from None


__all__ = ["AggregateForm", "IncidentForm", "MeasurementForm", "WorkersForm", "parsed"]
