"""Query parameters are read by Django forms (latency.forms): given nothing
they mean the defaults, given values they build the filters the reading
code takes, refuse bad input with a message naming the parameter, and keep
what was typed so the page can show a mistake in place."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.http import QueryDict

from latency.forms import DashboardFilterForm, ExportFilterForm, LiveFeedForm, RegionPageFilterForm
from probes.engine.result import OUTCOMES
from probes.exports import ExportFilters
from probes.readings import BadParameter, Selection

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def known(make_region, make_target, make_probe):
    near = make_region(slug="form-near", name="Near")
    far = make_region(slug="form-far", name="Far")
    probe = make_probe(target=make_target(name="Form target"), regions=[near, far])
    return {"near": near, "far": far, "probe": probe, "target": probe.target}


def query(text: str) -> QueryDict:
    return QueryDict(text)


def test_a_dashboard_form_given_no_parameters_means_the_last_hour_of_everything(known):
    for data in (None, QueryDict(), {}):
        form = DashboardFilterForm(data, now=NOW)
        assert form.is_valid(), form.errors
        assert form.result() == Selection(since=NOW - timedelta(hours=1), until=NOW, window="1h")


def test_a_dashboard_form_builds_the_filters_the_reading_code_takes(known):
    t, near, far = known["target"].id, known["near"], known["far"]
    form = DashboardFilterForm(
        query(
            f"target={t}&target={t}&region=form-far&region=form-near&window=custom&since=36h&until=&percentile=p95&metric=ttfb"
        ),
        now=NOW,
    )
    f = form.result()
    assert f == Selection(
        target_ids=[t],
        region_ids=[far.id, near.id],
        since=NOW - timedelta(hours=36),
        until=NOW,
        metric="ttfb",
        percentile=0.95,
        window="custom",
    )


DASHBOARD_REFUSALS = [
    ("window=2y", "window", "window must be one of 15m, 1h, 24h, 7d, 30d, custom"),
    ("window=1h&window=24h", "window", "window must be given once"),
    ("percentile=p42", "percentile", "percentile must be one of p50, p90, p95, p99"),
    ("metric=foo", "metric", "metric must be one of ttft, ttfat, ttfb, connect, tls, total, tokens_per_s"),
    ("target=abc", "target", "target must be a target id or all, got 'abc'"),
    ("target=999999&target=999998", "target", "unknown target id 999999, 999998"),
    ("region=nowhere", "region", "unknown region 'nowhere'"),
    ("window=custom", "since", "a custom window needs since (ISO 8601 or relative such as 24h)"),
    (
        "window=custom&since=garbage",
        "since",
        "since: 'garbage' is neither an ISO 8601 time nor a relative one such as 24h or 7d",
    ),
    (
        "window=custom&since=24h&until=someday",
        "until",
        "until: 'someday' is neither an ISO 8601 time nor a relative one such as 24h or 7d",
    ),
    ("window=custom&since=1h&until=2h", "since", "since must be before until"),
    ("window=custom&since=401d", "since", "the window is longer than 400 days; choose a shorter one"),
    ("window=1h&since=2026-01-01T00:00", "since", "since applies to window=custom only"),
    ("until=1h", "since", "a custom window needs since (ISO 8601 or relative such as 24h)"),
]


@pytest.mark.parametrize(("text", "param", "message"), DASHBOARD_REFUSALS, ids=[t for t, _, _ in DASHBOARD_REFUSALS])
def test_a_bad_dashboard_parameter_is_refused_with_a_message_naming_it(known, text, param, message):
    form = DashboardFilterForm(query(text), now=NOW)
    assert not form.is_valid()
    with pytest.raises(BadParameter) as err:
        form.result()
    assert (err.value.param, str(err.value)) == (param, message)


def test_a_region_page_form_ignores_target_and_region(known):
    form = RegionPageFilterForm(query("target=abc&region=nowhere&metric=total"), now=NOW)
    f = form.result()
    assert (f.target_ids, f.region_ids, f.metric) == ([], [], "total")
    assert form.selected["targets"] == [] and form.selected["regions"] == []


def test_an_export_form_given_no_parameters_means_the_last_day_of_everything(known):
    assert ExportFilterForm(QueryDict(), now=NOW).result() == ExportFilters(since=NOW - timedelta(hours=24), until=NOW)


def test_an_export_form_builds_the_export_filters(known):
    t, p = known["target"].id, known["probe"].id
    form = ExportFilterForm(
        query(
            f"target={t}&probe={p}&region=form-near&outcome=ok&outcome=timeout&outcome=ok&since=2026-02-01T00:00Z&until=6h&bucket=1d"
        ),
        now=NOW,
    )
    assert form.result() == ExportFilters(
        since=datetime(2026, 2, 1, tzinfo=UTC),
        until=NOW - timedelta(hours=6),
        target_ids=[t],
        probe_ids=[p],
        region_ids=[known["near"].id],
        outcomes=["ok", "timeout"],
        bucket="1d",
    )


EXPORT_REFUSALS = [
    ("target=all", "target", "target must be a target id, got 'all'"),
    ("probe=-1", "probe", "probe must be a probe id, got '-1'"),
    ("probe=99999999999999999999999", "probe", "unknown probe id 99999999999999999999999"),
    ("region=all", "region", "unknown region 'all'"),
    ("outcome=exploded", "outcome", f"outcome must be one of {', '.join(OUTCOMES)}, got 'exploded'"),
    ("since=yesterday", "since", "since: 'yesterday' is neither an ISO 8601 time nor a relative one such as 24h or 7d"),
    ("since=1h&since=2h", "since", "since must be given once"),
    ("since=2026-03-02T10:00Z&until=2026-03-02T09:00Z", "since", "since must be before until"),
    (
        "since=2024-01-01T00:00Z&until=2026-01-01T00:00Z",
        "since",
        "since: the range to until is longer than 400 days; choose a shorter one",
    ),
    ("bucket=10m", "bucket", "bucket must be one of 5m, 1h, 1d, all"),
]


@pytest.mark.parametrize(("text", "param", "message"), EXPORT_REFUSALS, ids=[t for t, _, _ in EXPORT_REFUSALS])
def test_a_bad_export_parameter_is_refused_with_a_message_naming_it(known, text, param, message):
    with pytest.raises(BadParameter) as err:
        ExportFilterForm(query(text), now=NOW).result()
    assert (err.value.param, str(err.value)) == (param, message)


@pytest.mark.parametrize(("text", "target"), [("", None), ("target=", None), ("target=all", None), ("target=7", 7)])
def test_the_live_feed_form_reads_one_target_or_all(text, target):
    assert LiveFeedForm(query(text), now=NOW).result() == target


@pytest.mark.parametrize("text", ["target=abc", "target=0", "target=-3", "target=1&target=2", "target=%C2%B2"])
def test_the_live_feed_form_refuses_anything_but_one_target_id(text):
    with pytest.raises(BadParameter) as err:
        LiveFeedForm(query(text), now=NOW).result()
    assert err.value.param == "target"


def test_a_bound_form_keeps_what_was_typed_when_it_is_refused(known):
    form = DashboardFilterForm(
        query(
            "window=custom&since=garbage&until=&percentile=p95&metric=ttfb&region=form-far&target=12x&over_time=lines"
            "&workload=prompt_10k"
        ),
        now=NOW,
    )
    assert not form.is_valid()
    assert form.selected == {
        "targets": [],
        "regions": ["form-far"],
        "window": "custom",
        "since": "garbage",
        "until": "",
        "percentile": "p95",
        "metric": "ttfb",
        "over_time": "lines",
        "layer": "both",
        "pool": False,
        "map_target": "",
        "workload": "prompt_10k",
    }


@pytest.fixture
def signed_in(client, django_user_model):
    client.force_login(django_user_model.objects.create_user(username="form-reader", password="unused-password-7781"))
    return client


def test_the_overview_shows_a_refused_value_as_typed_next_to_the_error(signed_in, known):
    response = signed_in.get("/", {"window": "custom", "since": "last tuesday", "metric": "ttfb", "percentile": "p95"})
    assert response.status_code == 400
    html = response.content.decode()
    assert 'name="since" value="last tuesday"' in html
    assert '<option value="custom" selected>' in html
    assert '<option value="ttfb" selected>' in html and '<option value="p95" selected>' in html
    assert "since: &#x27;last tuesday&#x27; is neither an ISO 8601 time" in html
    assert re.search(r"\(parameter <code>since</code>\)", html)


def test_the_overview_echoes_a_valid_selection_and_keeps_it_in_its_links(signed_in, known):
    t = known["target"].id
    response = signed_in.get(
        "/", {"target": [str(t)], "region": ["form-near"], "window": "24h", "since": "", "metric": "total"}
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<input type="checkbox" name="target" value="{t}" data-name="Form target" checked> Form target' in html
    near = known["near"]
    # Ticked in the region picker (the far one is offered, not ticked), and named in its summary.
    assert f'name="region" value="form-near" data-id="{near.id}" data-name="Near" checked>' in html
    assert f'value="form-far" data-id="{known["far"].id}" data-name="Far">' in html
    assert '<span id="region-summary">Near</span>' in html
    assert '<option value="24h" selected>' in html and '<option value="total" selected>' in html
    # The "all regions" link drops the region and the blank since, keeping the rest.
    assert f'href="?target={t}&amp;window=24h&amp;metric=total">all regions</a>' in html
    # The export links carry the same selection, the preset window as a relative since.
    assert f"/export/measurements.csv?target={t}&amp;region=form-near&amp;since=24h" in html


def test_the_region_page_shows_a_refused_metric_as_typed(signed_in, known):
    response = signed_in.get("/regions/form-near/", {"metric": "latency", "window": "7d"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "metric must be one of ttft" in html
    assert '<option value="7d" selected>' in html
