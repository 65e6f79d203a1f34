"""/incidents/: open incidents first (newest first), then the resolved ones, 50 to a page; filtered by target
and state through its GET form; and only for signed-in users, even when the dashboard is public."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from tests.factories import AlertRuleFactory, IncidentFactory, RegionFactory, TargetFactory

pytestmark = pytest.mark.django_db

NOW = datetime.now(UTC).replace(microsecond=0)


def incident(rule, target, *, hours_ago: float, resolved_after: float | None = None, **fields):
    started = NOW - timedelta(hours=hours_ago)
    resolved = None if resolved_after is None else started + timedelta(hours=resolved_after)
    return IncidentFactory(
        rule=rule, target=target, started_at=started, opened_at=started, resolved_at=resolved, **fields
    )


def rows_of(html: str, table_id: str) -> list[str]:
    """The incident ids of a table's rows, in order."""
    import re

    table = html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'data-incident="(\d+)"', table)


@pytest.mark.parametrize("public", [False, True])
def test_an_anonymous_visitor_is_asked_to_sign_in_even_on_a_public_dashboard(client, settings, public):
    settings.LATENCY_PUBLIC_DASHBOARD = public
    incident(AlertRuleFactory(), TargetFactory(), hours_ago=1)
    for url in (reverse("incidents"), reverse("incident", args=[1])):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/?next=")


def test_open_incidents_come_first_newest_first_then_the_history(client, viewer):
    lagos = RegionFactory(name="Lagos")
    target = TargetFactory(name="gpt-eu")
    older_rule, newer_rule, past_rule = (
        AlertRuleFactory(name="TTFT slow"),
        AlertRuleFactory(name="TTFB slow"),
        (AlertRuleFactory(name="Errors")),
    )
    older = incident(older_rule, target, hours_ago=3, regions=[lagos])
    newer = incident(newer_rule, target, hours_ago=1, scope="global", acknowledged_by=viewer, acknowledged_at=NOW)
    past_old = incident(past_rule, target, hours_ago=30, resolved_after=2)
    past_new = incident(past_rule, target, hours_ago=20, resolved_after=0.5, silenced=True)

    response = client.get(reverse("incidents"))
    assert response.status_code == 200
    html = response.content.decode()
    assert html.index('id="open-table"') < html.index('id="history-table"')
    assert rows_of(html, "open-table") == [str(newer.id), str(older.id)]
    assert rows_of(html, "history-table") == [str(past_new.id), str(past_old.id)]
    # Each row says what a reader needs without opening it.
    open_table = html.split('id="open-table"', 1)[1].split("</table>", 1)[0]
    for text in ("TTFT slow", "gpt-eu", "regional", "global", "Lagos", "server wait", "2100 ms", "800 ms", "viewer"):
        assert text in open_table, text
    history = html.split('id="history-table"', 1)[1].split("</table>", 1)[0]
    assert "30\xa0minutes" in history and "2\xa0hours" in history  # durations of the resolved ones
    assert "silenced" in history


def test_the_form_filters_by_target_and_state(client, viewer):
    rule = AlertRuleFactory()
    mine, other = TargetFactory(name="mine"), TargetFactory(name="other")
    open_mine = incident(rule, mine, hours_ago=1)
    incident(rule, other, hours_ago=1)
    past_mine = incident(rule, mine, hours_ago=10, resolved_after=1)

    html = client.get(reverse("incidents"), {"target": mine.id}).content.decode()
    assert rows_of(html, "open-table") == [str(open_mine.id)]
    assert rows_of(html, "history-table") == [str(past_mine.id)]

    html = client.get(reverse("incidents"), {"state": "open"}).content.decode()
    assert 'id="history-table"' not in html and len(rows_of(html, "open-table")) == 2

    html = client.get(reverse("incidents"), {"state": "resolved"}).content.decode()
    assert 'id="open-table"' not in html and rows_of(html, "history-table") == [str(past_mine.id)]

    response = client.get(reverse("incidents"), {"state": "sideways"})
    assert response.status_code == 400
    assert "sideways" in response.content.decode()


def test_the_history_is_paged_fifty_at_a_time(client, viewer):
    rule, target = AlertRuleFactory(), TargetFactory()
    for n in range(51):
        incident(rule, target, hours_ago=100 - n, resolved_after=0.5)
    first = client.get(reverse("incidents")).content.decode()
    assert len(rows_of(first, "history-table")) == 50
    assert "page=2" in first
    second = client.get(reverse("incidents"), {"page": 2}).content.decode()
    assert len(rows_of(second, "history-table")) == 1


def test_without_a_state_the_form_shows_open_and_resolved(client, viewer):
    html = client.get(reverse("incidents")).content.decode()
    select = html.split('name="state"', 1)[1].split("</select>", 1)[0]
    assert '<option value="all" selected>' in select
