"""/where/: a reader enters their traffic mix (share-<region slug>=<number>
in the URL, read by latency.forms.MixForm) and every target is ranked for
it; bad input is refused with a 400 naming the parameter, and the mix stays
in the form to be corrected."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.http import QueryDict
from django.utils import timezone

from latency.forms import MixForm
from probes.readings import BadParameter, Selection
from tests.factories import spread_measurements

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def world(make_region, make_target, make_probe):
    """Lagos and London (active), Oslo (inactive); "Split" fast for Lagos and
    slow for London, "Even" the same for both, with the last hour's data."""
    lagos = make_region(slug="mx-lagos", name="Lagos", city="Ikeja", latitude=6.52, longitude=3.38)
    london = make_region(slug="mx-london", name="London", city="Docklands", latitude=51.5, longitude=-0.13)
    make_region(slug="mx-oslo", name="Oslo", city="Oslo", active=False)
    split = make_target(name="Split", location_name="Lagos", latitude=6.45, longitude=3.4)
    even = make_target(name="Even", latitude=None, longitude=None)
    now = timezone.now()
    start = now - timedelta(minutes=40)
    for target, lagos_ms, london_ms in ((split, 100.0, 2000.0), (even, 600.0, 600.0)):
        probe = make_probe(target=target, regions=[lagos, london])
        spread_measurements(probe, lagos, start, now, 6, seed=1, ttft_ms=lagos_ms, tokens_per_s=lagos_ms / 10)
        spread_measurements(probe, london, start, now, 6, seed=2, ttft_ms=london_ms, tokens_per_s=london_ms / 10)
    return {"lagos": lagos, "london": london, "split": split, "even": even}


def ours(inputs: list[dict]) -> list[dict]:
    """The inputs of this module's regions (a migration seeds others)."""
    return [i for i in inputs if i["region"].slug.startswith("mx-")]


def get(client, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return response.content.decode()


def ranking(page: str) -> list[str]:
    table = page.split('id="mix-ranking"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<a href="/targets/\d+/">([^<]+)</a>', table)


def headers(page: str) -> list[str]:
    table = page.split('id="mix-ranking"', 1)[1].split("</thead>", 1)[0]
    return [html.unescape(h.strip()) for h in re.findall(r"<th[^>]*>([^<]*)</th>", table)]


# --- the form -------------------------------------------------------------------


@pytest.mark.django_db
def test_the_form_reads_a_share_per_region_slug_with_the_dashboards_window_metric_and_percentile(world):
    form = MixForm(
        QueryDict("share-mx-lagos=60&share-mx-london=40.5&share-mx-oslo=&window=24h&metric=ttfb&percentile=p90"),
        now=NOW,
    )
    f, shares = form.result()
    assert f == Selection(since=NOW - timedelta(hours=24), until=NOW, window="24h", metric="ttfb", percentile=0.9)
    assert shares == {world["lagos"].id: 60.0, world["london"].id: 40.5}
    # An input per active region, in name order, holding what was typed; an
    # inactive region only when the URL names it.
    assert [(i["region"].slug, i["value"]) for i in ours(form.share_inputs)] == [
        ("mx-lagos", "60"),
        ("mx-london", "40.5"),
        ("mx-oslo", ""),
    ]
    assert [i["region"].slug for i in ours(MixForm(QueryDict(), now=NOW).share_inputs)] == ["mx-lagos", "mx-london"]


@pytest.mark.django_db
def test_the_form_without_shares_means_no_mix_yet(world):
    f, shares = MixForm(QueryDict("share-mx-lagos=&window=1h"), now=NOW).result()
    assert shares == {} and f.window == "1h"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query, param, message",
    [
        ("share-mx-lagos=-5", "share-mx-lagos", "share-mx-lagos must be a number from 0 to 1,000,000,000, got '-5'"),
        ("share-mx-lagos=lots", "share-mx-lagos", "got 'lots'"),
        ("share-mx-lagos=nan", "share-mx-lagos", "got 'nan'"),
        ("share-mx-lagos=1e400", "share-mx-lagos", "got '1e400'"),
        ("share-mx-lagos=1&share-mx-lagos=2", "share-mx-lagos", "share-mx-lagos must be given once"),
        ("share-mx-lagos=0&share-mx-london=0", "share-mx-lagos", "every share is 0: give at least one region a share"),
        ("share-mx-lagos=50&share-atlantis=50", "share-atlantis", "unknown region 'atlantis' in share-atlantis"),
        ("share-mx-lagos=50&metric=speed", "metric", "metric must be one of"),
    ],
)  # fmt: skip
def test_bad_input_is_refused_naming_the_parameter(world, query, param, message):
    with pytest.raises(BadParameter) as refused:
        MixForm(QueryDict(query), now=NOW).result()
    assert refused.value.param == param
    assert message in str(refused.value)


# --- the page ---------------------------------------------------------------------


@pytest.mark.django_db
def test_the_page_asks_an_anonymous_visitor_to_sign_in_first(client):
    response = client.get("/where/?share-mx-lagos=1")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/where/")


@pytest.mark.django_db
def test_the_page_without_a_mix_offers_an_input_per_region_labelled_with_its_name_and_city(client, viewer, world):
    page = get(client, "/where/")
    assert 'id="mix-empty"' in page and 'id="mix-ranking"' not in page
    for slug, name, city in (("mx-lagos", "Lagos", "Ikeja"), ("mx-london", "London", "Docklands")):
        label = re.search(rf'<label for="id-share-{slug}">(.*?)</label>', page, re.S)
        assert label is not None, slug
        assert name in label.group(1) and city in label.group(1)
        assert f'name="share-{slug}"' in label.group(1) and 'type="number"' in label.group(1)
    assert "share-mx-oslo" not in page


@pytest.mark.django_db
def test_a_mix_in_the_url_ranks_targets_by_the_mixture_with_units_coverage_and_floor(client, viewer, world):
    # The median user of this mix is in Lagos, where Split answers in 100 ms;
    # but one in ten of its users (London's) waits 2 s with it.
    assert ranking(get(client, "/where/?share-mx-lagos=60&share-mx-london=40")) == ["Split", "Even"]
    page = get(client, "/where/?share-mx-lagos=60&share-mx-london=40&percentile=p90")
    assert ranking(page) == ["Even", "Split"]
    assert "Ranked by p90" in page
    assert headers(page) == [
        "#",
        "Target",
        "Location",
        "Samples",
        "Coverage (%)",
        "p50 Time to first token (ms)",
        "p95 Time to first token (ms)",
        "p90 Time to first token (ms)",
        "Fiber floor p50 (ms)",
        "Fiber floor p95 (ms)",
        "Tax p50 (ms)",
        "Errors (%)",
    ]
    assert re.search(r'id="mix-summary">.*Lagos</a> 60 %.*London</a> 40 %', page, re.S)
    assert 'value="60"' in page and 'value="40"' in page
    assert "merged into one distribution" in page
    # Even has no location: said plainly instead of a number.
    even_row = page.split(f'data-target-id="{world["even"].id}"', 1)[1].split("</tr>", 1)[0]
    assert "unknown: the target has no location" in even_row


@pytest.mark.django_db
def test_for_tokens_per_second_higher_ranks_first_and_the_headers_say_tok_s(client, viewer, world):
    page = get(client, "/where/?share-mx-lagos=60&share-mx-london=40&metric=tokens_per_s")
    # Lagos streams 10 tok/s with Split, 60 with Even.
    assert ranking(page) == ["Even", "Split"]
    assert "p50 Tokens per second (tok/s)" in headers(page)
    assert "Higher is better" in page


@pytest.mark.django_db
def test_a_region_of_the_mix_without_data_is_named_in_the_row(client, viewer, world, make_region):
    make_region(slug="mx-lima", name="Lima", city="Lima")
    page = get(client, "/where/?share-mx-lagos=1&share-mx-lima=1")
    assert page.count("no data from Lima") == 2
    split_row = page.split(f'data-target-id="{world["split"].id}"', 1)[1].split("</tr>", 1)[0]
    assert re.search(r'<td class="num">50\s', split_row)


@pytest.mark.django_db
def test_bad_input_answers_400_with_the_message_and_keeps_the_mix_to_correct(client, viewer, world):
    response = client.get("/where/?share-mx-lagos=-5&share-mx-london=40")
    assert response.status_code == 400
    page = response.content.decode()
    assert "share-mx-lagos must be a number from 0 to 1,000,000,000, got &#x27;-5&#x27;" in page
    assert "<code>share-mx-lagos</code>" in page
    assert 'value="-5"' in page and 'value="40"' in page
    assert 'id="mix-ranking"' not in page
    zero = client.get("/where/?share-mx-lagos=0")
    assert zero.status_code == 400 and "every share is 0" in zero.content.decode()
    unknown = client.get("/where/?share-nowhere=10")
    assert unknown.status_code == 400 and "unknown region &#x27;nowhere&#x27;" in unknown.content.decode()


@pytest.mark.django_db
def test_the_overview_and_every_region_page_link_to_the_mix(client, viewer, world):
    overview = get(client, "/")
    section = overview.split("<h2>Where my users are</h2>", 1)[1].split("</section>", 1)[0]
    assert 'href="/where/"' in section
    region = get(client, "/regions/mx-london/")
    assert 'href="/where/?share-mx-london=100"' in region
    # The link leads to a working mix of that one region.
    assert ranking(get(client, "/where/?share-mx-london=100")) == ["Even", "Split"]
