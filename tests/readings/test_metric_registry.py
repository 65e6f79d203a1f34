"""One list of metrics (probes.metrics): ingest stores every field of the
engine's result or ignores it on purpose, the rollups and the models have
what the registry promises, and the page is told each metric's unit."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from probes import ingest, metrics
from probes.engine.result import Measurement as EngineMeasurement
from probes.models import HourlyRollup, Measurement, RegionRollup, SeriesRollup


def test_every_field_of_the_engines_result_is_stored_or_ignored_with_a_reason():
    names = [f.name for f in dataclasses.fields(EngineMeasurement)]
    assert metrics.unaccounted_engine_fields(names) == []
    assert all(reason.strip() for reason in metrics.IGNORED_ENGINE_FIELDS.values())
    # What ingest stores is what it says it stores.
    assert set(metrics.stored_engine_fields()) <= set(ingest.COLUMNS)


def test_a_new_engine_field_that_ingest_does_not_store_is_named():
    grown = dataclasses.make_dataclass("Grown", [("first_chunk_ms", float | None, None)], bases=(EngineMeasurement,))
    names = [f.name for f in dataclasses.fields(grown)]
    assert metrics.unaccounted_engine_fields(names) == ["first_chunk_ms"]


def test_every_metric_has_its_column_and_every_histogram_metric_its_rollup_fields():
    stored = {f.name for f in Measurement._meta.get_fields()}
    for m in metrics.METRICS:
        assert m.column in stored, m.name
        assert m.column in ingest.COLUMNS, m.name
    for model in (HourlyRollup, RegionRollup, SeriesRollup):
        fields = {f.name for f in model._meta.get_fields()}
        assert {m.rollup_field for m in metrics.HISTOGRAM} <= fields, model.__name__
        # A histogram field the registry does not know would never be filled.
        assert {f for f in fields if f.endswith("_hist")} == {m.rollup_field for m in metrics.HISTOGRAM}


@pytest.mark.django_db
def test_the_page_is_told_each_selectable_metrics_label_and_unit(client, django_user_model, make_probe):
    make_probe()
    user = django_user_model.objects.create_user(username="reader", password="a-long-test-password-5512")
    client.force_login(user)
    html = client.get("/").content.decode()
    config = json.loads(re.search(r'<script id="dashboard-config"[^>]*>(.*?)</script>', html, re.S)[1])
    assert config["metrics"] == {
        m.name: {"label": m.label, "short": m.short, "unit": m.unit} for m in metrics.SELECTABLE
    }
    assert config["metrics"]["tokens_per_s"]["unit"] == "tok/s"
    # Every selectable metric is an option of the selector, in the registry's order.
    options = re.findall(r'<option value="([^"]+)"', html.split('name="metric"')[1].split("</select>")[0])
    assert options == [m.name for m in metrics.SELECTABLE]
