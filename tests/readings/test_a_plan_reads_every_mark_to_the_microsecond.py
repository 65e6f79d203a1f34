"""plan.marks reads the RollupHour marks of a range of hours as integers and makes them datetimes itself. What it
returns must be what the ORM reads: the same hours, each built_at to the microsecond, aware and in UTC, and
nothing outside [first, end)."""

from datetime import UTC, datetime, timedelta

import pytest

from probes.models import RollupHour
from probes.readings.plan import complete_days, coverage, marks

pytestmark = pytest.mark.django_db

FIRST = datetime(2026, 11, 30, tzinfo=UTC)
END = FIRST + timedelta(hours=30)


def test_the_marks_are_the_ones_the_orm_reads() -> None:
    built = [FIRST + timedelta(hours=h, minutes=5, seconds=7, microseconds=h * 12345 + 1) for h in range(30)]
    # One hour before the range and one at its end, which are not in it.
    outside = [RollupHour(hour=FIRST - timedelta(hours=1), built_at=FIRST), RollupHour(hour=END, built_at=FIRST)]
    RollupHour.objects.bulk_create(
        [RollupHour(hour=FIRST + timedelta(hours=h), built_at=at) for h, at in enumerate(built)] + outside
    )
    read = marks(FIRST, END)
    orm = dict(RollupHour.objects.filter(hour__gte=FIRST, hour__lt=END).values_list("hour", "built_at"))
    assert read == orm and len(read) == 30
    assert [read[FIRST + timedelta(hours=h)] for h in range(30)] == built
    assert all(at.utcoffset() == timedelta(0) for pair in read.items() for at in pair)
    # A day whose 24 hours are marked is a complete day; the fingerprint writes the build times whole.
    plan = coverage(FIRST, END)
    assert len(plan.hours) == 30 and complete_days(plan.hours) == ([FIRST], plan.hours[24:])
    assert plan.built[FIRST + timedelta(hours=29)].isoformat() == built[29].isoformat()


def test_a_range_without_marks_has_none() -> None:
    assert marks(FIRST, FIRST + timedelta(days=1)) == {}
