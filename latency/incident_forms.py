"""The incidents pages' forms: the list's filters (GET), a silence and a public update (POST)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import forms
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from probes.models import IncidentUpdate, Target
from probes.readings.incidents import STATES
from probes.timeparse import in_range

STATE_LABELS = {
    "open": gettext_lazy("open"),
    "resolved": gettext_lazy("resolved"),
    "all": gettext_lazy("open and resolved"),
}
# The durations offered, with their labels; "until" takes the end typed beside it.
DURATION_OPTIONS = [
    ("30m", timedelta(minutes=30), gettext_lazy("30 min")),
    ("1h", timedelta(hours=1), gettext_lazy("1 h")),
    ("2h", timedelta(hours=2), gettext_lazy("2 h")),
    ("4h", timedelta(hours=4), gettext_lazy("4 h")),
    ("24h", timedelta(hours=24), gettext_lazy("24 h")),
]
DURATIONS = {key: length for key, length, _label in DURATION_OPTIONS}
DURATION_CHOICES = [
    *((key, label) for key, _length, label in DURATION_OPTIONS),
    ("until", gettext_lazy("until the end below")),
]
# A maintenance window longer than this is more likely a typo in the year than a plan; the admin allows any.
LONGEST_SILENCE = timedelta(days=31)


class IncidentFilterForm(forms.Form):
    """/incidents/?target=<id>&state=open|resolved|all&page=<n>."""

    target = forms.ModelChoiceField(
        queryset=Target.objects.order_by("name"), required=False, empty_label=gettext_lazy("All targets")
    )
    state = forms.ChoiceField(choices=[(s, STATE_LABELS[s]) for s in STATES], required=False)
    page = forms.IntegerField(min_value=1, required=False, widget=forms.HiddenInput)

    def __init__(self, data=None, **kwargs) -> None:
        # No state given means all, and the select must say so (not show its first option, "open").
        if data is not None and not data.get("state"):
            data = data.copy()
            data["state"] = "all"
        super().__init__(data, **kwargs)

    def clean_state(self) -> str:
        return self.cleaned_data["state"] or "all"

    def clean_page(self) -> int:
        return self.cleaned_data["page"] or 1


class BackForm(forms.Form):
    """Where a POST goes back to: a page of this site, or "" (the view's default)."""

    next = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, host: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.host = host

    def clean_next(self) -> str:
        # Only a page of this site: an open redirect would turn the form into a phishing hop.
        text = self.cleaned_data["next"]
        if text and url_has_allowed_host_and_scheme(text, allowed_hosts={self.host}, require_https=False):
            return text
        return ""


class SilenceForm(BackForm):
    """A silence of a target from now: a duration, or an explicit end (UTC); a reason; where to go back to."""

    duration = forms.ChoiceField(choices=DURATION_CHOICES, initial="1h", label=gettext_lazy("For"))
    until = forms.DateTimeField(
        required=False,
        label=gettext_lazy("Ends (UTC)"),
        help_text=gettext_lazy("For “until the end below”: e.g. 2026-01-31 18:00."),
        widget=forms.DateTimeInput(attrs={"placeholder": "2026-01-31 18:00", "size": 16}),
    )
    reason = forms.CharField(max_length=200, required=False, label=gettext_lazy("Reason"))

    field_order = ["duration", "until", "reason", "next"]

    def __init__(self, *args, now: datetime | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.now = now or timezone.now()

    def clean_until(self) -> datetime | None:
        until = self.cleaned_data["until"]
        if until is None:
            return None
        # Typed times are UTC, as every time on the site; one the site cannot hold is refused, as everywhere.
        try:
            return in_range(until, self.data.get(self.add_prefix("until"), ""))
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self):
        data = super().clean()
        duration = data.get("duration")
        if duration is None:
            return data
        if duration != "until":
            data["ends_at"] = self.now + DURATIONS[duration]
            return data
        until = data.get("until")
        if "until" in self.errors:
            return data
        if until is None:
            self.add_error("until", _("Give the end of the silence (UTC), or choose a duration."))
        elif until <= self.now:
            self.add_error("until", _("The end must be in the future."))
        elif until - self.now > LONGEST_SILENCE:
            self.add_error(
                "until",
                _("A silence from this page lasts at most %(days)d days; longer ones are set in the admin.")
                % {"days": LONGEST_SILENCE.days},
            )
        else:
            data["ends_at"] = until
        return data


class IncidentUpdateForm(forms.ModelForm):
    """A public update of an incident (what status pages show): its status and the words for the readers."""

    class Meta:
        model = IncidentUpdate
        fields = ("status", "text")
        widgets = {"text": forms.Textarea(attrs={"rows": 3, "maxlength": 5000})}

    def clean_text(self) -> str:
        text = self.cleaned_data["text"].strip()
        if not text:
            raise forms.ValidationError(_("Write what the readers should know."))
        return text
