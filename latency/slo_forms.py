"""The SLA report's period, as the report page, /export/slo-report.csv and /api/v1/slos/<id>/report/ read it:
one form, so a period means the same and is refused with the same message at every door.

- `period=2026-11`: that calendar month, UTC;
- `start=...&end=...`: ISO 8601 dates or times (UTC when no zone is given); an end given as a date alone takes
  that whole day in (start=2026-11-01&end=2026-11-30 is November), an end time is excluded;
- neither: the current calendar month so far.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from latency.forms import MAX_ID, Once, ParamsForm
from probes.readings.slos import month_bounds
from probes.timeparse import EARLIEST, LATEST

# A year and a day, leap years included: a yearly report, never an unbounded read.
MAX_REPORT_SPAN = timedelta(days=366)
DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MONTH = "month"
RANGE = "range"
MONTH_SO_FAR = "month_so_far"


@dataclass(frozen=True)
class ReportPeriod:
    since: datetime
    until: datetime
    kind: str  # MONTH, RANGE or MONTH_SO_FAR
    period: str  # "2026-11" for a month (and the month so far), else ""
    start: str = ""  # as typed, for links that ask for the same period
    end: str = ""

    def params(self) -> dict[str, str]:
        """The query parameters that ask for this period again (the CSV link, the API's)."""
        if self.kind == RANGE:
            return {"start": self.start, "end": self.end}
        if self.kind == MONTH:
            return {"period": self.period}
        return {}

    def query(self) -> str:
        return urlencode(self.params())


class ReportPeriodForm(ParamsForm):
    period = Once()
    start = Once()
    end = Once()

    def clean_period(self) -> str | None:
        text = self.cleaned_data["period"]
        if text is None:
            return None
        try:
            since, until = month_bounds(text)
        except (ValueError, OverflowError):
            since = until = None
        if since is None or until is None or not (since >= EARLIEST and until <= LATEST):
            raise ValidationError(
                _("period must be a calendar month as YYYY-MM, e.g. 2026-11, got %(value)s") % {"value": repr(text)}
            ) from None
        return text

    def _time(self, name: str, *, whole_day: bool) -> datetime | None:
        text = self.cleaned_data[name]
        if text is None:
            return None
        if not DATE_ONLY.match(text) and not text[:1].isdigit():
            raise ValidationError(
                _("%(param)s must be an ISO 8601 date or time, e.g. 2026-11-01, got %(value)s")
                % {"param": name, "value": repr(text)}
            )
        when = self.when(name, text)
        return when + timedelta(days=1) if whole_day and DATE_ONLY.match(text) else when

    def clean_start(self) -> datetime | None:
        return self._time("start", whole_day=False)

    def clean_end(self) -> datetime | None:
        return self._time("end", whole_day=True)

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        period, start, end = data.get("period"), data.get("start"), data.get("end")
        if period is not None and (start is not None or end is not None):
            self.add_error("period", _("give period, or start and end, not both"))
        elif start is not None and end is None:
            self.add_error("end", _("end is needed with start: give both, or a period such as 2026-11"))
        elif end is not None and start is None:
            self.add_error("start", _("start is needed with end: give both, or a period such as 2026-11"))
        elif start is not None and end is not None:
            if end <= start:
                self.add_error("end", _("end must be after start"))
            elif end - start > MAX_REPORT_SPAN:
                self.add_error("end", _("a report covers at most %(days)d days; ask for a shorter one") % {"days": 366})
        return data

    def build(self) -> ReportPeriod:
        data = self.cleaned_data
        if data["period"] is not None:
            since, until = month_bounds(data["period"])
            return ReportPeriod(since, until, MONTH, data["period"])
        if data["start"] is not None:
            return ReportPeriod(data["start"], data["end"], RANGE, "", self.typed("start")[-1], self.typed("end")[-1])
        since = self.now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        return ReportPeriod(since, self.now, MONTH_SO_FAR, f"{since:%Y-%m}")


class ReportExportForm(ReportPeriodForm):
    """The CSV's parameters: the objective (slo, its id) and the report's period."""

    slo = Once()

    field_order = ["slo", "period", "start", "end"]

    def clean_slo(self) -> int:
        from probes.models import ServiceLevelObjective

        text = self.cleaned_data["slo"]
        if text is None:
            raise ValidationError(_("slo is needed: the id of an objective"))
        if not (text.isascii() and text.isdigit()) or int(text) > MAX_ID:
            raise ValidationError(_("slo must be an objective id, got %(value)s") % {"value": repr(text)})
        if not ServiceLevelObjective.objects.filter(id=int(text)).exists():
            raise ValidationError(_("unknown slo id %(ids)s") % {"ids": text})
        return int(text)

    def build(self) -> tuple[int, ReportPeriod]:  # type: ignore[override]
        return self.cleaned_data["slo"], super().build()
