"""A status page the admin would refuse (a hostname the site does not answer, another page's domain, a slug that
is no slug, a target no file or database has, a language the site does not speak, a field of the wrong type) is
refused by apply naming the page and the field, and the file applies nothing at all, not even the valid changes
before it."""

from __future__ import annotations

import yaml

from probes.models import StatusPage, Target
from tests.config_as_code.conftest import STATUS_HOST, atlas, counts, export_text


def test_every_bad_page_is_named_and_nothing_is_applied(configured, tmp_path):
    path = export_text(tmp_path)
    document = yaml.safe_load(path.read_text())
    exported = path.read_text()
    # Valid changes first in the file: they must not be applied either.
    next(t for t in document["targets"] if t["name"] == "claude-eu")["location_name"] = "moved"
    next(p for p in document["status_pages"] if p["slug"] == "internal")["title"] = "Renamed"
    document["status_pages"] += [
        {"slug": "elsewhere", "title": "Elsewhere", "public": True, "hostname": "status.elsewhere.example"},
        {"slug": "twice", "title": "Twice", "public": True, "hostname": STATUS_HOST},
        {"slug": "Not A Slug", "title": "Bad slug"},
        {"slug": "ghost", "title": "Ghost", "targets": ["no-such-target"]},
        {"slug": "french", "title": "French", "language": "fr"},
    ]
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    before = counts()

    run = atlas("apply", str(path))

    problems = [line.strip() for line in run.error.splitlines()[1:]]
    assert run.error.startswith("refused, nothing was changed:")
    assert any(
        p.startswith('status page "elsewhere": hostname: status.elsewhere.example is not in ALLOWED_HOSTS')
        for p in problems
    ), problems
    assert 'status page "twice": hostname: Another status page already has this hostname.' in problems
    assert any(p.startswith('status page "Not A Slug": slug: Enter a valid “slug”') for p in problems), problems
    assert 'status page "ghost": targets: no target "no-such-target" in the file or the database' in problems, problems
    assert any(p.startswith('status page "french": language: Select a valid choice.') for p in problems), problems
    assert counts() == before
    assert Target.objects.get(name="claude-eu").location_name != "moved"
    assert StatusPage.objects.get(slug="internal").title == "Internal"
    assert export_text(tmp_path, "after.yaml").read_text() == exported


def test_a_value_of_the_wrong_type_is_refused_with_its_path(configured, tmp_path):
    path = tmp_path / "pages.yaml"
    path.write_text(
        yaml.safe_dump(
            {"version": 1, "status_pages": [{"slug": "acme", "title": "Acme APIs", "public": "yes", "regions": "x"}]}
        )
    )

    run = atlas("apply", str(path))

    assert 'status page "acme": public: expected true or false, got a string' in run.error
    assert 'status page "acme": regions: expected a list of names, got a string' in run.error
    assert StatusPage.objects.get(slug="acme").public is True
