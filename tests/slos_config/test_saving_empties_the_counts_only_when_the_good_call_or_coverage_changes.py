"""After a save (the admin's here; the API's and `atlas apply`'s call the same function), counts made under
another condition or coverage are deleted and the objective says its counts are exact from nowhere; a change that
leaves the good call and what it covers as they were (a name, the objective, the window, the mix's shares) keeps
them. A change of a model group's targets empties the counts of the objectives over it at the next reconcile
(every alert pass). A disabled objective is emptied and not rebuilt. Compare-and-swap: counts a rebuild made under
the new condition meanwhile are kept."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from probes.models import ServiceLevelObjective, SLOHourCount
from probes.slos.services import objective_saved, reconcile
from tests.factories import (
    ModelGroupFactory,
    RegionFactory,
    ServiceLevelObjectiveFactory,
    SLOHourCountFactory,
    TargetFactory,
)

pytestmark = pytest.mark.django_db
SINCE = datetime(2026, 11, 6, tzinfo=UTC)


@pytest.fixture
def counted():
    """An objective whose counts were made under its present condition, with three hours of them."""
    objective = ServiceLevelObjectiveFactory(name="chat", degraded_ttft_threshold_ms=500.0)
    ServiceLevelObjective.objects.filter(pk=objective.pk).update(
        counted_condition=objective.condition_fingerprint(), exact_since=SINCE
    )
    target = objective.targets.get()
    for hour in range(3):
        SLOHourCountFactory(objective=objective, target=target, hour=SINCE.replace(hour=hour))
    return objective


def post_change(admin_client, objective, capture, **changes) -> None:
    data = {
        "name": objective.name,
        "enabled": "on",
        "targets": [t.pk for t in objective.targets.all()],
        "model_group": "",
        "mix": "{}",
        "ttft_threshold_ms": objective.ttft_threshold_ms,
        "tpot_threshold_ms": "",
        "total_threshold_ms": "",
        "degraded_ttft_threshold_ms": objective.degraded_ttft_threshold_ms,
        "objective_percent": objective.objective_percent,
        "window": objective.window,
        "exclude_silences": "on",
        **changes,
    }
    with capture(execute=True):
        response = admin_client.post(f"/admin/probes/servicelevelobjective/{objective.pk}/change/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else response


def test_a_name_objective_or_window_change_keeps_the_counts(admin_client, counted, django_capture_on_commit_callbacks):
    post_change(
        admin_client,
        counted,
        django_capture_on_commit_callbacks,
        name="chat renamed",
        objective_percent="99.9",
        window="calendar_month",
    )
    counted.refresh_from_db()
    assert counted.name == "chat renamed" and counted.exact_since == SINCE
    assert counted.counted_condition == counted.condition_fingerprint()
    assert SLOHourCount.objects.filter(objective=counted).count() == 3


@pytest.mark.parametrize(
    "change",
    [
        {"ttft_threshold_ms": "801"},
        {"tpot_threshold_ms": "40"},
        {"total_threshold_ms": "5000"},
        {"degraded_ttft_threshold_ms": ""},
        {"exclude_silences": ""},
        {"exclude_rate_limited": "on"},
        {"targets": "another target"},
        {"regions": "a region"},
        {"enabled": ""},
    ],
)
def test_a_change_of_the_good_call_empties_the_counts(
    admin_client, counted, django_capture_on_commit_callbacks, change
):
    other = ServiceLevelObjectiveFactory(name="other")
    SLOHourCountFactory(objective=other, hour=SINCE)
    if change.get("targets"):
        change["targets"] = [counted.targets.get().pk, TargetFactory().pk]
    if change.get("regions"):
        change["regions"] = [RegionFactory().pk]

    post_change(admin_client, counted, django_capture_on_commit_callbacks, **change)

    counted.refresh_from_db()
    assert (counted.counted_condition, counted.exact_since) == ("", None)
    assert not SLOHourCount.objects.filter(objective=counted).exists()
    assert SLOHourCount.objects.filter(objective=other).count() == 1


def test_counts_a_rebuild_made_meanwhile_under_the_new_condition_are_kept(counted):
    """The condition changes; before objective_saved runs, a rebuild counts under it and says so."""
    ServiceLevelObjective.objects.filter(pk=counted.pk).update(ttft_threshold_ms=900.0)
    counted.refresh_from_db()
    ServiceLevelObjective.objects.filter(pk=counted.pk).update(
        counted_condition=counted.condition_fingerprint(), exact_since=SINCE
    )

    objective_saved(counted.pk)

    counted.refresh_from_db()
    assert counted.exact_since == SINCE
    assert SLOHourCount.objects.filter(objective=counted).count() == 3


def test_an_objective_deleted_before_its_save_is_followed_up_is_no_error(counted):
    pk = counted.pk
    counted.delete()
    objective_saved(pk)
    assert not SLOHourCount.objects.filter(objective_id=pk).exists()


def test_a_change_of_a_model_groups_targets_empties_its_objectives_counts_at_the_next_reconcile(
    django_capture_on_commit_callbacks,
):
    group = ModelGroupFactory(targets=[TargetFactory()])
    objective = ServiceLevelObjectiveFactory(model_group=group, targets=[])
    ServiceLevelObjective.objects.filter(pk=objective.pk).update(
        counted_condition=objective.condition_fingerprint(), exact_since=SINCE
    )
    SLOHourCountFactory(objective=objective, target=group.targets.first(), hour=SINCE)
    assert reconcile() == []  # nothing changed: nothing emptied

    group.targets.add(TargetFactory())
    with django_capture_on_commit_callbacks(execute=True):
        assert reconcile() == [objective.pk]

    objective.refresh_from_db()
    assert (objective.counted_condition, objective.exact_since) == ("", None)
    assert not SLOHourCount.objects.filter(objective=objective).exists()
