"""The workbook's slower page: 7 bad calls in every 100 for six hours (7x), and 8x over the last 30 minutes, pages
though no hour reaches 14.4x; the incident says which alert holds (6x over 6 h and 30 min)."""

from __future__ import annotations

from probes.models import Incident
from probes.readings.slos import objective_row
from tests.slos_alerts.conftest import NOW, at, hours_ago


def test_six_hours_at_7x_with_a_burning_half_hour_page(scene):
    lagos = scene.regions[0]
    scene.calls(lagos, at(-60), at(-30), good=47, bad=3)
    scene.calls(lagos, at(-30), at(0), good=46, bad=4)
    scene.count()
    scene.hours(lagos, hours_ago(6), hours_ago(1), good=93, bad=7)

    row = objective_row(scene.objective.id, NOW)
    assert round(row.burn["6h"], 6) == 7.0 and round(row.burn["30m"], 6) == 8.0
    assert round(row.burn["1h"], 6) == 7.0

    assert scene.run(0).opened == 1

    incident = Incident.objects.get()
    assert incident.severity == "page"
    assert (incident.summary_data["factor"], incident.summary_data["long"], incident.summary_data["short"]) == (
        6.0,
        "6h",
        "30m",
    )
    assert incident.summary.startswith(
        "Objective “chat 99” burns its error budget at 7.0x over 6 h and 8.0x over 30 min, above a page's 6x, "
        "in Lagos on gpt-eu; "
    )
    assert incident.summary.endswith(" 1 of 1 regions: global.")
