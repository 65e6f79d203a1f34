"""In headless Chromium, signed in as a superuser who chose 简体中文 in the header: the admin's index, and every
list, add form and row page of our models, show none of our English labels. The labels are collected from the models and
admin classes themselves (tests/admin_language/labels.py), so a field added without its translation fails here;
the same search on the English pages finds them, so the search itself is not blind."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from devtools.harness import login
from tests.browser.conftest import snap

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(600)]

PASSWORD = "correct-horse-battery-staple-47"

# Every visible text node of the page, the options of its selects (closed, yet read when opened) and the titles of
# its fieldsets; hidden parts (the admin's collapsed filters on a narrow page, templates for inline rows) excepted.
VISIBLE_TEXT_JS = """() => {
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    const text = node.textContent.trim();
    if (!text || !el || el.closest('script, style, template, .empty-form')) continue;
    if (el.tagName === 'OPTION' ? el.closest('select').getClientRects().length : el.getClientRects().length) {
      texts.push(text);
    }
  }
  return texts;
}"""


@pytest.fixture
def admin_site_with_rows(transactional_db):
    """A superuser, and one row of each of our models the admin lists, so every list shows its columns."""
    from django.contrib.auth import get_user_model

    from tests import factories

    now = datetime.now(UTC)
    region = factories.RegionFactory(slug="fra", name="Frankfurt", city="Frankfurt", country="DE")
    target = factories.TargetFactory(name="gpt-eu")
    probe = factories.ProbeFactory(target=target, name="gpt-eu chat")
    probe.regions.add(region)
    factories.MeasurementFactory(probe=probe, region=region, scheduled_for=now - timedelta(minutes=5))
    factories.HourlyRollupFactory(probe=probe)
    factories.RegionKeyFactory(region=region)
    worker = factories.WorkerFactory(region=region)
    factories.MissedRunFactory(probe=probe, region=region)
    channel = factories.NotificationChannelFactory(name="ops-room")
    rule = factories.AlertRuleFactory(name="slow-ttft", target=target)
    rule.channels.add(channel)
    incident = factories.IncidentFactory(rule=rule, target=target)
    factories.IncidentEventFactory(incident=incident)
    factories.SilenceFactory(target=target)
    factories.ModelGroupFactory(name="gpt-4o").targets.add(target)
    factories.IngestSourceFactory(name="web-shop")
    objective = factories.ServiceLevelObjectiveFactory(
        name="chat-p99", targets=[target], regions=[region], tpot_threshold_ms=40.0, degraded_ttft_threshold_ms=500.0
    )
    factories.SLOHourCountFactory(objective=objective, target=target, region=region)
    from probes.fleet.models import WorkerBeat
    from probes.models import DeadLetter

    WorkerBeat.objects.create(worker=worker, at=now, runs=1, in_flight=0)
    DeadLetter.objects.create(received_at=now, source="ingest", reason="bad signature", payload={"x": 1})
    get_user_model().objects.create_superuser("boss", "boss@example.com", PASSWORD)
    names = {region.name, target.name, probe.name, channel.name, rule.name, "gpt-4o", "web-shop", "chat-p99", "boss"}
    # Read here, before the browser runs its event loop in this thread (the ORM refuses to run inside one).
    return {"names": names, "pages": pages(), "english": english_labels()}


def pages() -> list[str]:
    """The admin's index, and the list, add form (where the admin has one) and one row's page of each of our
    models."""
    from django.contrib import admin

    urls = [reverse("admin:index")]
    for model, model_admin in sorted(admin.site._registry.items(), key=lambda item: item[0].__name__):
        if model._meta.app_label != "probes":
            continue
        info = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        urls.append(reverse(f"{info}_changelist"))
        if model_admin.has_add_permission.__func__ is not _no_add(model_admin):
            urls.append(reverse(f"{info}_add"))
        row = model._default_manager.order_by("pk").first()
        if row is not None:
            urls.append(reverse(f"{info}_change", args=[row.pk]))
    return urls


def _no_add(model_admin):
    from probes.admin_base import WrittenByCodeAdmin

    return WrittenByCodeAdmin.has_add_permission


def english_labels() -> list[str]:
    """Our labels as English: what must not show on a Chinese page, a label the catalog lacks included. Left out:
    acronyms and names that read the same in both (SAME_IN_BOTH), and a label whose Chinese keeps the English in
    it (a product's name: "Anthropic Messages 接口"; "apprise url" as "Apprise URL")."""
    from tests.admin_language.labels import SAME_IN_BOTH, labels

    return sorted(
        {
            english
            for _where, english, chinese in labels()
            if not SAME_IN_BOTH.match(english) and (english == chinese or english.lower() not in chinese.lower())
        }
    )


def english_on(texts: list[str], english: list[str], names: set[str]) -> list[str]:
    """The labels found in the page's text: a one-word label where a text is that word (it would be found
    inside every proper name otherwise), a longer one anywhere as whole words."""
    found = []
    cleaned = [t.rstrip(":： ").strip() for t in texts if t not in names]
    lowered = [t.lower() for t in cleaned]
    for label in english:
        low = label.lower()
        if " " not in low:
            hit = next((t for t in lowered if t == low), None)
        else:
            pattern = re.compile(rf"(?<![a-z]){re.escape(low)}(?![a-z])")
            hit = next((t for t in lowered if pattern.search(t)), None)
        if hit is not None:
            found.append(f"{label!r} in {hit!r}")
    return found


def choose_chinese(page, origin: str) -> None:
    page.goto(f"{origin}/")
    page.select_option(".language-switch select[name=language]", "zh-hans")
    with page.expect_navigation():
        page.click(".language-switch button[type=submit]")
    page.wait_for_function("() => document.documentElement.lang === 'zh-hans'", timeout=20_000)


def read(page, url: str) -> list[str]:
    response = page.goto(url)
    assert response is not None and response.status == 200, (url, response and response.status)
    return page.evaluate(VISIBLE_TEXT_JS)


def test_every_admin_page_of_ours_shows_no_english_label_in_chinese(admin_site_with_rows, asgi_server, browser_page):
    page = browser_page
    page.set_viewport_size({"width": 1440, "height": 900})
    origin = asgi_server.origin
    names = admin_site_with_rows["names"]
    english = admin_site_with_rows["english"]
    assert len(english) > 300, "the labels were not collected"
    login(page, origin, "boss", PASSWORD)

    # The search finds our labels on the English pages: it is not what makes the Chinese pages pass.
    found_in_english = english_on(read(page, f"{origin}{reverse('admin:probes_target_add')}"), english, names)
    assert any("'Credentials and TLS'" in hit for hit in found_in_english), found_in_english
    assert any("'API key environment variable'" in hit for hit in found_in_english), found_in_english
    assert english_on(read(page, f"{origin}{reverse('admin:index')}"), english, names)

    choose_chinese(page, origin)
    problems = []
    visited = admin_site_with_rows["pages"]
    for url in visited:
        texts = read(page, f"{origin}{url}")
        assert page.evaluate("() => document.documentElement.lang") == "zh-hans", url
        problems += [f"{url}: {hit}" for hit in english_on(texts, english, names)]
    snap(page, "admin-zh-hans-last-page")
    assert problems == [], "\n".join(problems)
    assert len(visited) > 40

    page.goto(f"{origin}{reverse('admin:index')}")
    captions = page.locator("#content-main caption").all_text_contents()
    assert [c.strip() for c in captions] == ["配置", "记录", "用户与访问权限"]
