"""Objectives with known hour counts, for the pages, the report, the CSV and the API.

- `signed_in`: Django's test client signed in as a plain user (no permission: the pages need sign-in only).
- `counted(objective, since=...)`: mark an objective's counts current (as slo_rebuild leaves them), exact since.
- `known(...)`: an objective over two targets and two regions with hour counts three and two hours ago:
  `known.objective`, `known.cells` {(target, region): {field: value}}, `known.targets`, `known.regions`,
  `known.hours`. Figures in the tests are worked out from `known.cells`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import RegionFactory, ServiceLevelObjectiveFactory, SLOHourCountFactory, TargetFactory

# (target index, region index, hours before the current hour): the counts stored there.
CELLS = {
    (0, 0, 3): {"good": 90, "degraded": 5, "bad": 10, "missed": 2, "excluded": 3, "bad_minutes": 0b1011},
    (0, 1, 3): {"good": 50, "degraded": 0, "bad": 0, "missed": 0, "excluded": 0, "bad_minutes": 0},
    (1, 0, 2): {"good": 20, "degraded": 1, "bad": 5, "missed": 1, "excluded": 0, "bad_minutes": 0b1},
}


def this_hour() -> datetime:
    return datetime.now(UTC).replace(minute=0, second=0, microsecond=0)


def counted(objective, since: datetime | None = None):
    from probes.models import ServiceLevelObjective

    ServiceLevelObjective.objects.filter(pk=objective.pk).update(
        counted_condition=objective.condition_fingerprint(), exact_since=since or this_hour() - timedelta(days=60)
    )
    objective.refresh_from_db()
    return objective


@dataclass
class Known:
    objective: object
    targets: list
    regions: list
    cells: dict  # (target, region) -> {field: value}
    hours: list  # the hours holding counts

    def total(self, field: str) -> int:
        return sum(values[field] for values in self.cells.values())


def make_known(name: str = "chat p99", target_names=("gpt-eu", "claude-eu"), **fields) -> Known:
    targets = [TargetFactory(name=n) for n in target_names]
    regions = [RegionFactory(slug="zz-lima", name="Lima"), RegionFactory(slug="zz-oslo", name="Oslo")]
    objective = counted(ServiceLevelObjectiveFactory(name=name, targets=targets, objective_percent=99.0, **fields))
    now = this_hour()
    cells, hours = {}, set()
    for (t, r, back), values in CELLS.items():
        hour = now - timedelta(hours=back)
        SLOHourCountFactory(objective=objective, target=targets[t], region=regions[r], hour=hour, **values)
        cells[(targets[t], regions[r])] = values
        hours.add(hour)
    return Known(objective, targets, regions, cells, sorted(hours))


@pytest.fixture
def known(db) -> Known:
    return make_known()


@pytest.fixture
def signed_in(client, django_user_model):
    user = django_user_model.objects.create_user("reader", "reader@example.org")
    client.force_login(user)
    return client


def element(html: str, tag: str, marker: str) -> str:
    """The first <tag ...marker...>...</tag> (not nested in one of its kind), whole, or an AssertionError."""
    import re

    found = re.search(rf"<{tag}\b[^>]*{re.escape(marker)}[^>]*>.*?</{tag}>", html, re.S)
    assert found, f"no <{tag} {marker}> in the page"
    return found.group(0)


def text(fragment: str) -> str:
    """The fragment's text, tags dropped and white space folded."""
    import html as html_lib
    import re

    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def attribute(fragment: str, tag: str, name: str) -> str:
    import re

    found = re.search(rf'<{tag}\b[^>]*\b{name}="([^"]*)"', fragment)
    assert found, f"no <{tag} {name}=...> in {fragment[:200]}"
    return found.group(1)


def shown(value: float, places: int) -> str:
    """A number as the pages print it (Django's floatformat: halves round up)."""
    from django.template.defaultfilters import floatformat

    return str(floatformat(value, places))


def csv_rows(client, query: str) -> tuple[object, list[dict[str, str]]]:
    """(response, rows) of /export/slo-report.csv?query, its streamed body read to the end."""
    import csv
    import io

    from asgiref.sync import async_to_sync

    response = client.get(f"/export/slo-report.csv?{query}")

    async def read() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])

    body = async_to_sync(read)() if getattr(response, "streaming", False) else response.content
    return response, list(csv.DictReader(io.StringIO(body.decode())))
