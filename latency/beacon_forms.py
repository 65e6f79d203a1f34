"""The browser beacon's body as a Django form: what static/atlas-rum.js sends for one call.

Timings are the page's performance.now() readings in milliseconds (relative to the page's load, so no clock of
the visitor's is trusted): `start` at the click, `first_token` when the first token was on screen, `end` when the
answer was complete. Nothing else is free text: `label` is a short name of the kind of call ("chat", "search"),
chosen by the page's author, and `error` an error's type ("AbortError", "http_500"); both are refused when they
look like sentences, so no prompt or answer can ride in them."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

# performance.now() of a page open for a year; past it a reading is garbage, not a timing.
MAX_READING_MS = 365 * 24 * 3600 * 1000.0
# The longest call a beacon may report: a streamed answer of half an hour is no real chat any more.
MAX_CALL_MS = 30 * 60 * 1000.0
MAX_TOKENS = 1_000_000

# A label or error type is a word or two: letters, digits, a few separators, no punctuation of prose.
_label = RegexValidator(
    r"^[\w][\w .:/-]{0,63}\Z",
    gettext_lazy("a label is up to 64 letters, digits, spaces and . : / - _ (a name for the kind of call)"),
)
_error = RegexValidator(
    r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}\Z",
    gettext_lazy("an error is a type of up to 64 letters, digits and . : - _, such as AbortError"),
)


class BeaconForm(forms.Form):
    key = forms.CharField(max_length=60)
    target = forms.CharField(max_length=100, required=False)  # a Target's name (probes.Target.name)
    label = forms.CharField(max_length=64, required=False, validators=[_label])
    start = forms.FloatField(min_value=0, max_value=MAX_READING_MS)
    first_token = forms.FloatField(min_value=0, max_value=MAX_READING_MS, required=False)
    end = forms.FloatField(min_value=0, max_value=MAX_READING_MS)
    tokens = forms.IntegerField(min_value=0, max_value=MAX_TOKENS, required=False)
    error = forms.CharField(max_length=64, required=False, validators=[_error])

    def clean(self):
        data = super().clean()
        if self.data is not None and hasattr(self.data, "lists"):
            repeated = sorted(name for name, values in self.data.lists() if len(values) > 1)
            if repeated:
                raise ValidationError(
                    _("each field is sent once; repeated: %(names)s") % {"names": ", ".join(repeated)}
                )
        start, first, end = data.get("start"), data.get("first_token"), data.get("end")
        if start is None or end is None:
            return data
        if end < start:
            raise ValidationError(_("end comes before start"))
        if end - start > MAX_CALL_MS:
            raise ValidationError(_("a call of more than 30 minutes is not a beacon's"))
        if first is not None and not start <= first <= end:
            raise ValidationError(_("first_token must lie between start and end"))
        return data

    @property
    def ttft_ms(self) -> float | None:
        first = self.cleaned_data.get("first_token")
        return None if first is None else first - self.cleaned_data["start"]

    @property
    def total_ms(self) -> float:
        return self.cleaned_data["end"] - self.cleaned_data["start"]
