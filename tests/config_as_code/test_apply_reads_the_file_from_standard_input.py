"""`atlas apply -` reads the file from standard input, so `atlas export | ... | atlas apply -` needs no file."""

from __future__ import annotations

import io
import sys

from probes.models import Region
from tests.config_as_code.conftest import atlas

FILE = """\
regions:
- slug: eu-paris
  name: Paris, France
  city: Paris
  country: FR
  latitude: 48.8566
  longitude: 2.3522
"""


def test_apply_dash_reads_standard_input(db, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(FILE))

    run = atlas("apply", "-")

    assert run.error == ""
    assert run.out.splitlines() == ['+ create region "eu-paris"', "Applied: 1 created, 0 updated, 0 deleted."]
    assert Region.objects.get(slug="eu-paris").city == "Paris"
