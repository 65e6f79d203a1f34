"""The admin's objective form (also what `atlas apply` judges a file's objective with) refuses each broken rule
beside the field it concerns, in words that say what to do: exactly one of targets or a model group; regions or a
mix, not both; a mix of known region slugs with shares above 0; a degraded threshold below the TTFT threshold; an
objective strictly between 0 and 100. The database's check constraints are the backstop, not the message."""

from __future__ import annotations

import json

import pytest

from probes.models import ServiceLevelObjective
from probes.slos.admin import ObjectiveAdminForm
from tests.factories import ModelGroupFactory, RegionFactory, TargetFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return {
        "target": TargetFactory(name="gpt-eu"),
        "group": ModelGroupFactory(name="gpt-4o"),
        "london": RegionFactory(slug="zz-london"),
        "ashburn": RegionFactory(slug="zz-ashburn"),
    }


def form_data(world, **changes) -> dict:
    data = {
        "name": "chat p99",
        "enabled": "on",
        "targets": [world["target"].pk],
        "model_group": "",
        "regions": [],
        "mix": "{}",
        "ttft_threshold_ms": "800",
        "tpot_threshold_ms": "",
        "total_threshold_ms": "",
        "degraded_ttft_threshold_ms": "",
        "objective_percent": "99.5",
        "window": "rolling_30d",
        "exclude_silences": "on",
    }
    for name, value in changes.items():
        data[name] = json.dumps(value) if name == "mix" and not isinstance(value, str) else value
    return data


def errors_of(world, **changes) -> dict[str, list[str]]:
    form = ObjectiveAdminForm(data=form_data(world, **changes))
    assert not form.is_valid()
    assert not ServiceLevelObjective.objects.exists()
    return {field: list(messages) for field, messages in form.errors.items()}


def test_a_sound_objective_is_saved_with_its_mix_as_numbers(world):
    form = ObjectiveAdminForm(
        data=form_data(world, targets=[], model_group=world["group"].pk, mix={"zz-london": 60, "zz-ashburn": 40})
    )
    assert form.is_valid(), form.errors
    objective = form.save()
    assert objective.model_group == world["group"] and not objective.targets.exists()
    assert objective.mix == {"zz-london": 60.0, "zz-ashburn": 40.0}


def test_neither_targets_nor_a_model_group_is_refused_on_targets(world):
    assert errors_of(world, targets=[]) == {"targets": ["Choose the targets this objective covers, or a model group."]}


def test_targets_and_a_model_group_together_are_refused_on_the_model_group(world):
    assert errors_of(world, model_group=world["group"].pk) == {
        "model_group": ["Choose targets or a model group, not both."]
    }


def test_regions_and_a_mix_together_are_refused_on_the_mix(world):
    errors = errors_of(world, regions=[world["london"].pk], mix={"zz-london": 100})
    assert errors == {"mix": ["Give regions or a mix of users, not both: the mix names its regions itself."]}


def test_a_mix_naming_unknown_regions_names_each_of_them(world):
    errors = errors_of(world, mix={"zz-london": 50, "mars-base": 25, "moon": 25})
    assert errors == {"mix": ["No region has the slug 'mars-base', 'moon'."]}


@pytest.mark.parametrize("share", [0, -5, "sixty", True, None, 2_000_000_000])
def test_a_share_that_is_no_number_above_0_is_refused_naming_its_region(world, share):
    errors = errors_of(world, mix={"zz-london": share, "zz-ashburn": 40})
    assert errors == {"mix": ["The share of zz-london must be a number above 0 and at most 1,000,000,000."]}


@pytest.mark.parametrize("mix", [[["zz-london", 60]], "60", 60])
def test_a_mix_that_is_no_object_is_refused_with_an_example(world, mix):
    errors = errors_of(world, mix=json.dumps(mix))
    assert errors == {
        "mix": ['The mix must be an object of region slugs to shares, e.g. {"eu-london": 60, "us-ashburn": 40}.']
    }


@pytest.mark.parametrize("degraded", ["800", "900"])
def test_a_degraded_threshold_at_or_above_the_ttft_threshold_is_refused(world, degraded):
    errors = errors_of(world, degraded_ttft_threshold_ms=degraded)
    assert errors == {
        "degraded_ttft_threshold_ms": [
            "The degraded threshold must be below the TTFT threshold (800 ms): calls between the two are degraded."
        ]
    }


def test_a_degraded_threshold_just_below_is_taken(world):
    form = ObjectiveAdminForm(data=form_data(world, degraded_ttft_threshold_ms="799.5"))
    assert form.is_valid(), form.errors


@pytest.mark.parametrize("percent", ["0", "100", "100.0000"])
def test_an_objective_of_0_or_100_is_refused(world, percent):
    assert errors_of(world, objective_percent=percent) == {
        "objective_percent": ["The objective must be above 0 and below 100 (percent)."]
    }


@pytest.mark.parametrize("percent", ["-1", "150"])
def test_an_objective_out_of_bounds_is_refused_once_by_the_fields_own_bound(world, percent):
    errors = errors_of(world, objective_percent=percent)
    assert list(errors) == ["objective_percent"] and len(errors["objective_percent"]) == 1


@pytest.mark.parametrize("percent", ["0.0001", "99.9999", "99.95"])
def test_an_objective_just_inside_the_bounds_is_taken(world, percent):
    form = ObjectiveAdminForm(data=form_data(world, objective_percent=percent))
    assert form.is_valid(), form.errors
