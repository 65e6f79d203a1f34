"""Status pages in the file: named by slug, their targets, model groups and objectives by name and their regions
by slug. A hand-written page takes the admin's defaults for what it leaves out; a change is planned field by
field; a second apply has nothing to do; --prune deletes a page the file leaves out, and a page naming an
objective --prune deletes is refused."""

from __future__ import annotations

import yaml

from probes.models import StatusPage
from tests.config_as_code.conftest import atlas, export_text


def apply_changed(tmp_path, change, *args: str):
    document = yaml.safe_load(export_text(tmp_path).read_text())
    change(document)
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    return atlas("apply", str(path), *args), path


def page(document: dict, slug: str) -> dict:
    return next(p for p in document["status_pages"] if p["slug"] == slug)


def test_a_hand_written_page_is_created_from_names_with_the_defaults_and_applied_once(configured, tmp_path):
    def add(document):
        document["status_pages"].append(
            {
                "slug": "gemini",
                "title": "Gemini",
                "targets": ["gemini-flash"],
                "model_groups": ["nothing yet"],
                "regions": ["zz-tokyo-2"],
                "slos": ["claude chat"],
            }
        )

    run, path = apply_changed(tmp_path, add)

    assert run.error == ""
    assert run.out.splitlines() == ['+ create status page "gemini"', "Applied: 1 created, 0 updated, 0 deleted."]
    created = StatusPage.objects.get(slug="gemini")
    assert [t.name for t in created.targets.all()] == ["gemini-flash"]
    assert [g.name for g in created.model_groups.all()] == ["nothing yet"]
    assert [r.slug for r in created.regions.all()] == ["zz-tokyo-2"]
    assert [o.name for o in created.slos.all()] == ["claude chat"]
    assert (created.public, created.language, created.show_latency, created.hostname, created.description) == (
        False,
        "en",
        True,
        "",
        "",
    )
    stamp = created.updated_at

    again = atlas("apply", str(path))

    assert again.out == f"Nothing to change: the database matches {path}.\n"
    assert StatusPage.objects.get(slug="gemini").updated_at == stamp


def test_a_change_is_planned_by_field(configured, tmp_path):
    def change(document):
        acme = page(document, "acme")
        acme["title"] = "Acme status"
        acme["show_latency"] = True
        acme["targets"] = ["claude-eu", "gemini-flash"]
        acme["slos"] = []

    run, _path = apply_changed(tmp_path, change)

    assert run.error == ""
    assert (
        '~ update status page "acme": title "Acme APIs" -> "Acme status"; targets +claude-eu; '
        "slos -fast models for our users; show_latency false -> true"
    ) in run.out.splitlines()
    acme = StatusPage.objects.get(slug="acme")
    assert (acme.title, acme.show_latency, acme.slos.exists()) == ("Acme status", True, False)
    assert sorted(t.name for t in acme.targets.all()) == ["claude-eu", "gemini-flash"]


def test_prune_deletes_a_page_the_file_leaves_out(configured, tmp_path):
    def drop_internal(document):
        document["status_pages"] = [p for p in document["status_pages"] if p["slug"] != "internal"]

    without_prune, path = apply_changed(tmp_path, drop_internal)
    assert "Nothing to change" in without_prune.out

    run = atlas("apply", str(path), "--prune")

    assert run.error == ""
    assert run.out.splitlines() == ['- delete status page "internal"', "Applied: 0 created, 0 updated, 1 deleted."]
    assert list(StatusPage.objects.values_list("slug", flat=True)) == ["acme"]


def test_a_page_naming_an_objective_the_prune_deletes_is_refused(configured, tmp_path):
    def drop_objective(document):
        document["objectives"] = [o for o in document["objectives"] if o["name"] != "fast models for our users"]

    run, _path = apply_changed(tmp_path, drop_objective, "--prune")

    assert (
        'status page "acme": slos: objective "fast models for our users" is not in the file, and --prune deletes it'
        in run.error
    )
    assert [o.name for o in StatusPage.objects.get(slug="acme").slos.all()] == ["fast models for our users"]
