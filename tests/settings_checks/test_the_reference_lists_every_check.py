"""The reference page's table of checks (probes.conf.catalog.CHECKS) has exactly the ids latency/checks.py
reports."""

import re

from probes.conf.catalog import CHECKS
from tests.support import ROOT


def test_the_reference_lists_every_check_and_no_other():
    reported = set(re.findall(r'id="(latency\.[EW]\d{3})"', (ROOT / "latency" / "checks.py").read_text()))
    assert reported == set(CHECKS)
