"""/slos/<id>/ says plainly how calls the provider refused for capacity count: bad by default, excluded from the
denominator when the objective excludes them."""

from __future__ import annotations

import pytest

from tests.factories import ServiceLevelObjectiveFactory
from tests.slos_pages.conftest import element, text

pytestmark = pytest.mark.django_db


def rules_of(client, objective) -> str:
    page = client.get(f"/slos/{objective.id}/")
    assert page.status_code == 200
    return text(element(page.content.decode(), "p", 'id="slo-rules"'))


def test_the_page_says_refused_calls_are_bad_unless_excluded(signed_in):
    objective = ServiceLevelObjectiveFactory()
    counting = rules_of(signed_in, objective)
    assert "Calls the provider refused for its rate limits or its load count as bad." in counting
    assert "are excluded: they leave the denominator" not in counting.split("Calls the provider")[1]

    objective.exclude_rate_limited = True
    objective.save(update_fields=["exclude_rate_limited"])
    excluding = rules_of(signed_in, objective)
    assert "Calls the provider refused for its rate limits or its load are excluded: they leave the denominator." in (
        excluding
    )
    assert "count as bad." not in excluding.split("Calls the provider")[1]
