"""The catalogue of rollup kinds (probes.rollups.catalogue) is the whole story: every rollup model and mark model
is in it, each kind's key columns are its unique constraint's, its grains nest, its builder and pruner exist, and
what it is merged from is raw rows or a kind listed before it."""

from __future__ import annotations

import inspect

from django.apps import apps
from django.db import models

from probes import rollup_models
from probes.rollups.catalogue import KINDS, MARKS, SWITCHABLE


def concrete_models_of_rollup_models() -> set[str]:
    return {
        name
        for name, obj in vars(rollup_models).items()
        if inspect.isclass(obj) and issubclass(obj, models.Model) and not obj._meta.abstract
    }


def test_every_model_of_rollup_models_is_a_kind_or_a_mark():
    listed = {kind.model for kind in KINDS} | {mark.model for mark in MARKS}
    assert concrete_models_of_rollup_models() == listed


def test_each_kinds_keys_and_time_are_its_unique_constraint():
    for kind in KINDS:
        model = apps.get_model("probes", kind.model)
        [unique] = [c for c in model._meta.constraints if isinstance(c, models.UniqueConstraint)]
        columns = {model._meta.get_field(f).column for f in unique.fields}
        assert set(kind.keys) | {kind.time_column} <= columns, kind.name
        assert columns - set(kind.keys) - {kind.time_column} <= {"span_hours", "target_id"}, kind.name


def test_grains_nest_and_sources_come_first():
    seen = {"raw"}
    for kind in KINDS:
        assert all(b % a == 0 for a, b in zip(kind.grains, kind.grains[1:], strict=False)), kind.name
        assert kind.source in seen, kind.name
        seen.add(kind.name)
    # Blocks sharing a table never share a grain: the grain tells them apart.
    by_model: dict[str, list[int]] = {}
    for kind in KINDS:
        by_model.setdefault(kind.model, []).extend(kind.grains)
    assert all(len(g) == len(set(g)) for g in by_model.values())


def test_builders_pruners_and_marks_resolve():
    mark_names = {mark.name for mark in MARKS}
    for kind in KINDS:
        assert callable(kind.builder_function()) and callable(kind.pruner_function()), kind.name
        assert set(kind.marks) <= mark_names, kind.name
    for mark in MARKS:
        assert mark.pruner_function() is None or callable(mark.pruner_function())
    assert "hourly" not in SWITCHABLE and SWITCHABLE
