"""A target's page heads its measured columns with their units, and a target nothing measures says so,
with the way to add a probe for it, instead of blaming the region workers."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission

from tests.factories import MeasurementFactory, ProbeFactory, TargetFactory

pytestmark = pytest.mark.django_db


def headings(html: str, table_id: str) -> list[str]:
    table = html.split(f'id="{table_id}"', 1)[1].split("</thead>", 1)[0]
    return [re.sub(r"\s+", " ", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", table, re.S)]


def test_the_measurement_columns_carry_their_units(client, viewer):
    m = MeasurementFactory(ttft_ms=151.25, output_tokens=37, tokens_per_s=48.5)
    html = client.get(f"/targets/{m.target_id}/").content.decode()
    assert headings(html, "recent-measurements")[-5:] == [
        "TTFB (ms)",
        "TTFT (ms)",
        "Total time (ms)",
        "Output tokens",
        "Tokens/s (tok/s)",
    ]
    row = html.split('id="recent-measurements"', 1)[1].split("</tbody>", 1)[0]
    cells = re.findall(r'<td class="num">([^<]*)</td>', row)
    assert cells[-5:] == ["100.0", "151.3", "400.0", "37", "48.5"]


def test_a_target_without_a_probe_says_so_and_links_a_prefilled_probe_form(admin_client):
    target = TargetFactory(name="Lonely API")
    html = admin_client.get(f"/targets/{target.id}/").content.decode()
    assert "No probe measures this target yet." in html
    assert f'<a href="/admin/probes/probe/add/?target={target.id}">Add a probe for Lonely API</a>' in html
    assert "region workers" not in html

    form = admin_client.get(f"/admin/probes/probe/add/?target={target.id}").context["adminform"].form
    assert str(form["target"].value()) == str(target.id)


def test_a_reader_who_may_not_add_probes_gets_no_link(client, viewer):
    target = TargetFactory()
    html = client.get(f"/targets/{target.id}/").content.decode()
    assert "No probe measures this target yet." in html
    assert "/admin/probes/probe/add/" not in html
    assert "An administrator can add one in the admin." in html


def test_the_link_follows_the_permission_to_add_probes(client, viewer):
    viewer.user_permissions.add(Permission.objects.get(codename="add_probe"))
    target = TargetFactory()
    assert f"/admin/probes/probe/add/?target={target.id}" in client.get(f"/targets/{target.id}/").content.decode()


def test_a_target_whose_probes_are_disabled_says_so(client, viewer):
    probe = ProbeFactory(enabled=False)
    html = client.get(f"/targets/{probe.target_id}/").content.decode()
    assert "its probe is disabled" in html
    assert "region workers" not in html


def test_a_probed_target_without_measurements_points_at_the_region_workers(client, viewer):
    probe = ProbeFactory()
    html = client.get(f"/targets/{probe.target_id}/").content.decode()
    assert "No probe measures" not in html
    assert "check that the region workers" in html


def test_the_overview_of_an_unprobed_target_says_nothing_measures_it(client, viewer):
    ProbeFactory()  # something is probed, so the overview shows its filters
    target = TargetFactory(name="Never Probed API")
    html = client.get(f"/?target={target.id}").content.decode()
    assert "No probe measures Never Probed API yet" in html
    assert "region workers" not in html
