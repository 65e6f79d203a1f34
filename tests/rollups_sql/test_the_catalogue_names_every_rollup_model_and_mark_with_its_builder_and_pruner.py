"""The catalogue of rollup kinds (probes.rollups.catalogue) is the whole story: every rollup model and mark model
is in it, each kind's key columns are its unique constraint's, its grains nest, its builder and pruner exist, and
what it is merged from is raw rows or a kind listed before it. The rebuild (probes.rollups.build) builds the kinds
through the catalogue, naming none of them but the hourly kind it holds: a catalogue cut down to its base kind
builds that kind alone, and the whole catalogue every grain of every kind."""

from __future__ import annotations

import ast
import inspect
from datetime import UTC, datetime

import pytest
from django.apps import apps
from django.db import models

from probes import rollup_models
from probes.models import SeriesBlockMark
from probes.rollups import DAY, HOUR, build, rebuild_range
from probes.rollups.catalogue import KINDS, MARKS, SWITCHABLE
from probes.rollups.periods import SERIES_GRAINS, block_start
from tests.region_rollups.conftest import probes, regions  # noqa: F401
from tests.region_rollups.rows import fill


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


def test_kinds_are_listed_after_the_kinds_they_are_merged_from_and_only_a_kind_of_days_has_a_closer():
    position = {kind.name: i for i, kind in enumerate(KINDS)}
    for kind in KINDS:
        assert kind.source == "raw" or position[kind.source] < position[kind.name], kind.name
        assert kind.closer_function() is None or callable(kind.closer_function()), kind.name


def test_the_builder_names_no_kind_but_the_hourly_one_it_holds():
    tree = ast.parse(inspect.getsource(build))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    others = [kind for kind in KINDS if not kind.builder.startswith(f"{build.__name__}:")]
    assert others, "every kind built in build.py: the check would prove nothing"
    for kind in others:
        module, _, function = kind.builder.partition(":")
        assert module not in imported and module.rsplit(".", 1)[-1] not in names, kind.name
    for function in (build._build, build.rebuild_range):
        text = inspect.getsource(function)
        assert not [kind.name for kind in KINDS if f'"{kind.name}"' in text or kind.model in text], function


@pytest.mark.django_db
def test_a_rebuild_builds_every_kind_of_the_catalogue_and_only_those(probes, regions, monkeypatch):  # noqa: F811
    start = block_start(datetime.now(UTC) - 20 * DAY, HOUR * SERIES_GRAINS[-1]) - HOUR * SERIES_GRAINS[-1]
    end = start + HOUR * SERIES_GRAINS[-1]
    fill(probes, start, SERIES_GRAINS[-1], per_hour=1)

    # With the catalogue cut down to its base kind, the rebuild builds that kind alone.
    base = tuple(kind for kind in KINDS if kind.base)
    monkeypatch.setattr(build, "KINDS", base)
    rebuild_range(start, end)
    assert grains_built(start, end) == {(kind.model, g) for kind in base for g in kind.grains} | {("RegionRollup", 1)}

    # With every kind, every grain of every kind has rows over the same hours, and the blocks' marks.
    monkeypatch.undo()
    rebuild_range(start, end)
    assert grains_built(start, end) == {(kind.model, g) for kind in KINDS for g in kind.grains}
    marked = set(SeriesBlockMark.objects.values_list("span_hours", flat=True))
    assert marked == {g for kind in KINDS if "SeriesBlockMark" in kind.marks for g in kind.grains}


def grains_built(start: datetime, end: datetime) -> set[tuple[str, int]]:
    """(model, grain) of every rollup row over [start, end)."""
    found = set()
    for kind in KINDS:
        model = apps.get_model("probes", kind.model)
        rows = model.objects.filter(**{f"{kind.time_column}__gte": start, f"{kind.time_column}__lt": end})
        if "span_hours" in {f.name for f in model._meta.get_fields()}:
            found |= {(kind.model, g) for g in rows.values_list("span_hours", flat=True).distinct()}
        elif rows.exists():
            found.add((kind.model, 1))
    return found
