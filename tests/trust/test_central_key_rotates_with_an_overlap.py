"""`manage.py central_key` shows the central key (made when there is none),
and `--rotate --overlap` makes a new one: the old one signs beside it until
the overlap ends, and credentials issued in between carry both."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

from django.core.management import call_command

from probes.fleet import central
from probes.models import CentralKey
from tests.factories import region_credential


def central_key(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("central_key", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_rotation_keeps_the_old_key_signing_for_the_overlap(region):
    out, _err = central_key()
    (first,) = CentralKey.objects.all()
    assert first.key_id in out and first.sealed_private_key not in out
    before = region_credential(region)
    assert set(before.central_keys()) == {first.key_id}

    out, err = central_key("--rotate", "--overlap", "2h")
    second = CentralKey.objects.exclude(pk=first.pk).get()
    first.refresh_from_db()
    assert first.retires_at is not None
    assert datetime.now(UTC) + timedelta(minutes=119) < first.retires_at <= datetime.now(UTC) + timedelta(hours=2)
    assert second.key_id in out and f"new central key {second.key_id}" in err and region.slug in err
    assert {s.key_id for s in central.signers()} == {first.key_id, second.key_id}
    assert set(region_credential(region).central_keys()) == {first.key_id, second.key_id}

    central_key("--rotate", "--overlap", "0")
    assert [s.key_id for s in central.signers()] == [CentralKey.objects.order_by("-created_at")[0].key_id]
    assert len(region_credential(region).central) == 1
