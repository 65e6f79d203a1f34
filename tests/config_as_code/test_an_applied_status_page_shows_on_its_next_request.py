"""With the status cache on, a page that `atlas apply` changes or prunes shows so on its very next request once
the apply commits: its cached copies are forgotten, as when the admin saves it. A dry run plans the change and
makes none: the page is served as it was."""

from __future__ import annotations

import uuid

import pytest
import yaml

from probes.statuspages import cache as status_cache
from tests.config_as_code.conftest import atlas
from tests.factories import StatusPageFactory


@pytest.fixture
def page(db, settings):
    settings.LATENCY_STATUS_CACHE_S = 30
    # A slug of its own: nothing another test cached is found under it.
    page = StatusPageFactory(slug=f"apply-{uuid.uuid4().hex[:12]}", title="Acme before", public=True)
    yield page
    status_cache.forget(page.slug)


def write(tmp_path, pages: list[dict]):
    path = tmp_path / "pages.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "status_pages": pages}, sort_keys=False))
    return path


def test_a_changed_title_shows_at_once_and_a_dry_run_changes_nothing(
    page, client, tmp_path, django_capture_on_commit_callbacks
):
    url = f"/status/{page.slug}/"
    assert "Acme before" in client.get(url).content.decode()
    path = write(tmp_path, [{"slug": page.slug, "title": "Acme after", "public": True}])

    with django_capture_on_commit_callbacks(execute=True):
        dry = atlas("apply", str(path), "--dry-run")
    assert dry.error == "" and f'~ update status page "{page.slug}"' in dry.out
    assert "Acme before" in client.get(url).content.decode()

    # Apply forgets the cached page once the file commits (this test's transaction never does).
    with django_capture_on_commit_callbacks(execute=True):
        run = atlas("apply", str(path))

    assert run.error == ""
    html = client.get(url).content.decode()
    assert "Acme after" in html and "Acme before" not in html


def test_a_pruned_page_is_404_at_once(page, client, tmp_path, django_capture_on_commit_callbacks):
    url = f"/status/{page.slug}/"
    assert client.get(url).status_code == 200

    with django_capture_on_commit_callbacks(execute=True):
        run = atlas("apply", str(write(tmp_path, [])), "--prune")

    assert run.error == "" and f'- delete status page "{page.slug}"' in run.out
    assert client.get(url).status_code == 404
