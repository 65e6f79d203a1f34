"""`manage.py region_key SLUG --output FILE` writes the credential to a file only its owner may read, where a
container's worker reads it (LATENCY_REGION_KEY_FILE), and prints nothing; with `--keep`, a file whose credential
the site still accepts for the region is left alone and nothing is issued, so a set-up step run on every start
(deploy/compose.yaml's region-key) issues one key, not one per start. A file that would not serve (another
region's key, a retired or retiring one, one without the central key in force, not a credential) is replaced."""

from __future__ import annotations

import io
import stat
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command

from probes.fleet.central import rotate
from probes.models import RegionKey
from probes.worker.protocol import Credential
from tests.factories import sealed_results
from tests.trust.conftest import ingest


def region_key(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("region_key", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_output_writes_a_working_credential_readable_by_its_owner_alone_and_prints_nothing(region, payloads, tmp_path):
    path = tmp_path / "af-lagos.key"
    out, err = region_key(region.slug, "--output", str(path))
    assert out == ""
    text = path.read_text()
    assert text.endswith("\n") and text.count("\n") == 1
    credential = Credential.parse(text)
    assert RegionKey.objects.get(region=region).key_id == credential.key_id
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert Credential.secret_part(text) not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["af-lagos.key"]  # no temporary file left behind
    assert ingest(sealed_results(region, payloads(1), credential)) == 1


def test_keep_leaves_a_credential_in_force_and_issues_nothing(region, tmp_path):
    path = tmp_path / "key"
    region_key(region.slug, "--output", str(path))
    before = path.read_text()
    _, err = region_key(region.slug, "--output", str(path), "--keep")
    assert path.read_text() == before
    assert RegionKey.objects.filter(region=region).count() == 1
    assert "holds a key in force; kept" in err


@pytest.mark.parametrize(
    "spoil",
    ["retired", "retiring", "another region", "central key rotated", "not a credential", "missing"],
)
def test_keep_replaces_a_file_that_would_not_serve_the_region(region, make_region, tmp_path, spoil):
    path = tmp_path / "key"
    if spoil == "another region":
        other = make_region(slug="test-keep-other")
        region_key(other.slug, "--output", str(path))
    elif spoil == "not a credential":
        path.write_text("la2_not-a-credential\n")
    elif spoil != "missing":
        region_key(region.slug, "--output", str(path))
    old = Credential.parse(path.read_text()).key_id if path.exists() and spoil != "not a credential" else None
    if spoil == "retired":
        region_key(region.slug, "--retire", old)
    elif spoil == "retiring":
        region_key(region.slug, "--overlap", "2h")  # a newer key issued elsewhere: this one ends in two hours
    elif spoil == "central key rotated":
        rotate(timedelta(hours=1))
    _, err = region_key(region.slug, "--output", str(path), "--keep")
    new = Credential.parse(path.read_text())
    assert new.key_id != old
    key = RegionKey.objects.get(key_id=new.key_id)
    assert key.region_id == region.pk and key.retires_at is None
    assert f"a new key for {path}" in err
    assert Credential.secret_part(path.read_text()) not in err


def test_keep_without_output_is_refused_and_nothing_is_issued(region):
    with pytest.raises(CommandError, match="--keep needs --output"):
        region_key(region.slug, "--keep")
    assert not RegionKey.objects.exists()


def test_output_into_a_missing_folder_is_refused_naming_it(region, tmp_path):
    with pytest.raises(CommandError, match="does not exist"):
        region_key(region.slug, "--output", str(tmp_path / "nowhere" / "key"))
    assert not RegionKey.objects.exists()
