"""Every label of ours the admin shows (models, fields, help texts, choices, list columns, filters, fieldsets,
actions, inlines), collected from the models and admin classes, reads differently in Chinese than in English:
a label left out of the catalog, or written without gettext, fails here by name."""

from __future__ import annotations

from tests.admin_language.labels import labels, untranslated


def test_the_collection_finds_the_admins_labels():
    # A collection that found nothing would pass the next test vacuously.
    found = {english for _where, english, _chinese in labels()}
    assert {"target", "probes", "Run now", "Credentials and TLS", "measurements", "interval seconds"} <= found


def test_every_admin_label_of_ours_reads_in_chinese():
    assert untranslated() == []
