"""`manage.py region_key SLUG` prints a new credential alone on stdout (so
`KEY=$(manage.py region_key af-lagos)` captures it) and says on stderr which
key it is and until when the earlier ones work. The site keeps only the
public key: the credential text is nowhere in the database."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from probes.models import DeadLetter, Measurement, RegionKey
from probes.worker.protocol import CREDENTIAL_RE, Credential
from tests.conftest import _database_url
from tests.factories import sealed_results
from tests.support import ROOT
from tests.trust.conftest import every_stored_text, ingest


def region_key(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("region_key", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_region_key_prints_only_a_working_credential_and_the_database_holds_only_its_public_key(region, payloads):
    out, err = region_key(region.slug, "--note", "hosts lagos-1 and lagos-2")
    text = out.strip()
    assert out == text + "\n" and CREDENTIAL_RE.fullmatch(text)
    credential = Credential.parse(text)
    key = RegionKey.objects.get(region=region)
    assert (key.key_id, key.public_key, key.note) == (
        credential.key_id,
        credential.public_key,
        "hosts lagos-1 and lagos-2",
    )
    assert err.strip() == (
        f"region {region.slug} ({region.name}): new key {credential.key_id}; the region had no earlier key"
    )
    assert ingest(sealed_results(region, payloads(2), credential)) == 2

    stored = every_stored_text()
    assert key.public_key in stored  # the scan does see the keys table
    secret = Credential.secret_part(text)
    for piece in (text, secret, secret[:16], secret[-16:]):
        assert piece not in stored
        assert piece not in err


def test_a_rotation_keeps_the_earlier_key_for_the_overlap_and_says_until_when(region, payloads):
    first = Credential.parse(region_key(region.slug)[0])
    before = datetime.now(UTC)
    out, err = region_key(region.slug, "--overlap", "2h")
    second = Credential.parse(out)
    retires = RegionKey.objects.get(key_id=first.key_id).retires_at
    assert before + timedelta(hours=2) <= retires <= datetime.now(UTC) + timedelta(hours=2)
    assert f"new key {second.key_id}; its earlier keys are accepted until {retires:%Y-%m-%d %H:%M:%S} UTC" in err
    assert ingest(sealed_results(region, payloads(1), first), sealed_results(region, payloads(1, 1), second)) == 2


def test_overlap_0_retires_the_earlier_keys_at_once(region, payloads):
    first = Credential.parse(region_key(region.slug)[0])
    out, err = region_key(region.slug, "--overlap", "0")
    second = Credential.parse(out)
    assert err.strip().endswith("its earlier keys are no longer accepted")
    assert ingest(sealed_results(region, payloads(1), first)) == 0
    assert "was retired at" in DeadLetter.objects.get().reason
    assert ingest(sealed_results(region, payloads(1, 1), second)) == 1


def test_list_shows_the_keys_without_secrets_and_retire_ends_one_now(region, payloads):
    first = region_key(region.slug)[0].strip()
    second = region_key(region.slug)[0].strip()
    first_id, second_id = Credential.parse(first).key_id, Credential.parse(second).key_id
    listing, _ = region_key(region.slug, "--list")
    lines = listing.splitlines()
    assert lines[0].split() == ["region", "key", "id", "created", "retires", "in", "force"]
    (new_line,) = [line for line in lines if second_id in line]
    (old_line,) = [line for line in lines if first_id in line]
    assert new_line.endswith("yes") and " - " in new_line
    assert old_line.endswith("yes") and " UTC " in old_line  # retires after the overlap, in force meanwhile
    assert first not in listing and second not in listing

    _, err = region_key(region.slug, "--retire", second_id)
    assert f"key {second_id} of region {region.slug} is no longer accepted" in err
    assert region_key(region.slug, "--list")[0].splitlines()[1:] != lines[1:]
    assert ingest(sealed_results(region, payloads(1), Credential.parse(second))) == 0
    assert ingest(sealed_results(region, payloads(1, 1), Credential.parse(first))) == 1
    assert Measurement.objects.count() == 1


def test_an_unknown_slug_is_refused_naming_it_and_how_to_see_the_slugs(db):
    with pytest.raises(CommandError) as refused:
        region_key("no-such-region")
    assert "unknown region 'no-such-region'" in str(refused.value)
    assert "manage.py region_key --list" in str(refused.value)
    assert not RegionKey.objects.exists()


@pytest.mark.parametrize("overlap", ["soon", "-1h", "99999999d", "400d"])
def test_a_bad_overlap_is_refused_and_nothing_is_issued(region, overlap):
    with pytest.raises(CommandError, match="--overlap"):
        region_key(region.slug, "--overlap", overlap)
    assert not RegionKey.objects.exists()


def test_unknown_key_ids_are_refused_by_retire(region):
    region_key(region.slug)
    with pytest.raises(CommandError, match=f"region {region.slug} has no key 'ffffffffffffffff'"):
        region_key(region.slug, "--retire", "ffffffffffffffff")


def test_the_shell_can_capture_the_credential_alone(transactional_db, make_region):
    # As an operator runs it: KEY=$(manage.py region_key SLUG). Nothing but the credential on stdout.
    region = make_region(slug="test-shell")
    env = {"DATABASE_URL": _database_url(dict(connection.settings_dict)), "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, "manage.py", "region_key", region.slug],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert Credential.parse(done.stdout).key_id == RegionKey.objects.get(region=region).key_id
    assert done.stdout.count("\n") == 1
    assert "new key" in done.stderr
