"""Admin forms: the checks a model's clean() cannot make."""

from __future__ import annotations

from django import forms

from probes.models import Probe

NO_REGION = "Choose at least one region: a probe with no region never runs."


class ProbeAdminForm(forms.ModelForm):
    class Meta:
        model = Probe
        fields = "__all__"  # noqa: DJ007 -- the admin's fieldsets choose what is shown
        error_messages = {"regions": {"required": NO_REGION}}

    def clean_regions(self):
        # Many-to-many rows are written after the probe is saved, so
        # Probe.clean() never sees them; the form is the only place to refuse
        # an empty selection.
        regions = self.cleaned_data.get("regions")
        if not regions:
            raise forms.ValidationError(NO_REGION, code="no_region")
        return regions
