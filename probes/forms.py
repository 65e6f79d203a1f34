"""Admin forms: the checks a model's clean() cannot make."""

from __future__ import annotations

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.forms.fields import InvalidJSONInput
from django.utils.html import json_script
from django.utils.translation import gettext_lazy

from probes.jsondepth import MAX_DEPTH, TooDeep, bounded
from probes.models import Probe, Target
from probes.presets import PRESET_FIELDS, admin_fill_data

NO_REGION = gettext_lazy("Choose at least one region: a probe with no region never runs.")


def follow_model_bounds(form: forms.ModelForm) -> None:
    """Give each number field of the form its model field's bounds, messages included, in place of its own.

    A PositiveIntegerField hands its form field min_value=0 with Django's generic message, which answered
    before the model's rule: an interval of -5 read "greater than or equal to 0" while 5 read "at least 10".
    One rule, the model's, now speaks for every value (the input's min/max attributes agree with it too)."""
    bounds = (MinValueValidator, MaxValueValidator)
    model_fields = {f.name: f for f in form._meta.model._meta.get_fields() if hasattr(f, "validators")}
    for name, field in form.fields.items():
        model_field = model_fields.get(name)
        if not isinstance(field, forms.IntegerField | forms.FloatField) or model_field is None:
            continue
        rules = [v for v in model_field.validators if isinstance(v, bounds)]
        if not rules:
            continue
        field.validators = [v for v in field.validators if not isinstance(v, bounds)] + rules
        for rule in rules:
            attr = "min" if isinstance(rule, MinValueValidator) else "max"
            setattr(field, f"{attr}_value", rule.limit_value)
            field.widget.attrs[attr] = rule.limit_value


class BoundedJSONField(forms.JSONField):
    """Django's JSON field with the site's depth bound (probes.jsondepth): a document nested too deep is a form
    error, not the RecursionError (a 500) Django's lets through, and the page shows it back as typed."""

    default_error_messages = {
        "too_deep": gettext_lazy("This JSON nests deeper than %(depth)d levels."),
    }

    def to_python(self, value):
        try:
            return bounded(super().to_python, value)
        except TooDeep:
            raise forms.ValidationError(
                self.error_messages["too_deep"], code="too_deep", params={"depth": MAX_DEPTH}
            ) from None

    def bound_data(self, data, initial):
        try:
            return bounded(super().bound_data, data, initial)
        except TooDeep:
            return InvalidJSONInput(data)


class ProbeAdminForm(forms.ModelForm):
    class Meta:
        model = Probe
        fields = "__all__"  # noqa: DJ007 -- the admin's fieldsets choose what is shown
        error_messages = {"regions": {"required": NO_REGION}}
        # Boxes to tick: the multiple-select's "hold down Control" gesture is not needed, nor its hint.
        widgets = {"regions": forms.CheckboxSelectMultiple}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        follow_model_bounds(self)

    def clean_regions(self):
        # Many-to-many rows are written after the probe is saved, so
        # Probe.clean() never sees them; the form is the only place to refuse
        # an empty selection.
        regions = self.cleaned_data.get("regions")
        if not regions:
            raise forms.ValidationError(NO_REGION, code="no_region")
        return regions


class ProviderPresetSelect(forms.Select):
    """The "Provider preset" select, with what each preset fills beside it as JSON: the site's CSP allows no
    inline script, so static/js/provider-presets.js reads the data from the page."""

    class Media:
        js = ("js/provider-presets.js",)

    def render(self, name, value, attrs=None, renderer=None):
        # The model's defaults count as not typed: a new target's "HTTP/1.1" was never the user's choice.
        defaults = {field: Target._meta.get_field(field).get_default() for field in PRESET_FIELDS}
        data = {"presets": admin_fill_data(), "defaults": defaults}
        return super().render(name, value, attrs, renderer) + json_script(data, "provider-presets")


class TargetAdminForm(forms.ModelForm):
    class Meta:
        model = Target
        fields = "__all__"  # noqa: DJ007 -- the admin's fieldsets choose what is shown
        widgets = {"provider": ProviderPresetSelect}
        field_classes = {"headers": BoundedJSONField}
