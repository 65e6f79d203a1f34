"""Migration 0007 fills the blank model of Gemini targets saved before the admin took it from the URL, and
leaves alone an API base (no model in it), a model already set and other API styles."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("probes", "0006_tokens_per_s_histograms")]
AFTER = [("probes", "0007_gemini_targets_name_their_model")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_the_migration_fills_a_gemini_targets_blank_model_from_its_url():
    old = migrate(BEFORE)
    Target = old.get_model("probes", "Target")
    base = "https://generativelanguage.googleapis.com/v1beta"

    def make(name, style, url, model=""):
        return Target.objects.create(name=name, api_style=style, url=url, model=model, api_key_env="")

    full = make("full", "gemini", f"{base}/models/gemini-2.0-flash:streamGenerateContent")
    plain = make("plain", "gemini", f"{base}/models/gemini-1.5-pro:generateContent")
    api_base = make("base", "gemini", base)
    named = make("named", "gemini", f"{base}/models/gemini-2.0-flash:streamGenerateContent", model="gemini-2.0-flash")
    other = make("openai", "openai", "https://api.example.org/v1/models/x:streamGenerateContent")
    try:
        new = migrate(AFTER)
        models = dict(new.get_model("probes", "Target").objects.values_list("id", "model"))
        assert models[full.id] == "gemini-2.0-flash"
        assert models[plain.id] == "gemini-1.5-pro"
        assert models[api_base.id] == ""
        assert models[named.id] == "gemini-2.0-flash"
        assert models[other.id] == ""
    finally:
        # Every app back at its latest migration, as the rest of the suite expects.
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
