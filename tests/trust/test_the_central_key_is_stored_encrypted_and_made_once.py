"""The central signing key is made on first need, once even when several
processes need it at the same moment, and kept encrypted under a key derived
from SECRET_KEY: a dump of the database alone holds no piece of it and
cannot sign. After SECRET_KEY is rotated, SECRET_KEY_FALLBACKS still opens it."""

from __future__ import annotations

import base64
import threading

import pytest
from django.db import connection

from probes.fleet import central
from probes.models import CentralKey
from probes.worker.protocol import ORDER, PublicKey, open_central, seal_central
from tests.trust.conftest import every_stored_text


def test_the_key_is_made_once_by_processes_needing_it_at_once(transactional_db):
    barrier = threading.Barrier(4)

    def need() -> None:
        barrier.wait()
        try:
            central.public_keys()
        finally:
            connection.close()

    threads = [threading.Thread(target=need) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert CentralKey.objects.count() == 1


def test_the_stored_key_holds_no_piece_of_the_private_key_and_opens_only_with_the_secret_key(db, settings):
    central.forget()
    (signer,) = central.signers()
    (row,) = CentralKey.objects.all()
    seed = base64.urlsafe_b64encode(central.open_private(row.sealed_private_key, row.key_id)).rstrip(b"=").decode()
    stored = every_stored_text()
    assert row.public_key in stored
    for piece in (seed, seed[:12], seed[-12:]):
        assert piece not in stored

    # What the site signs verifies with the stored public key.
    order = seal_central(ORDER, "af-lagos", [signer], {"probe_id": 1})
    assert open_central(order, ORDER, {row.key_id: PublicKey(row.key_id, row.public_key)}) == (
        "af-lagos",
        {"probe_id": 1},
    )

    old = settings.SECRET_KEY
    settings.SECRET_KEY = "another secret key of at least fifty characters, for the test"
    with pytest.raises(central.UnreadableCentralKey, match="SECRET_KEY_FALLBACKS"):
        central.open_private(row.sealed_private_key, row.key_id)
    settings.SECRET_KEY_FALLBACKS = [old]
    assert central.open_private(row.sealed_private_key, row.key_id) == central.Credential.seed_of(signer._private)
    central.forget()
