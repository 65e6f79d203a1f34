"""The suite's embedded PostgreSQL lives in a temporary folder removed after the run, so it skips the work that
makes a commit survive a crash (fsync, synchronous commit, full page writes); a state folder that is kept, as
`make demo`'s var/demo, gets a durable cluster."""

from __future__ import annotations

import pytest

from devtools import embedded

# It starts a PostgreSQL of its own.
pytestmark = pytest.mark.e2e


def durability(service: embedded.EmbeddedPostgres) -> dict[str, str]:
    with service._connect("postgres") as conn:
        return {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in ("fsync", "synchronous_commit")}


def test_a_throwaway_cluster_skips_durability_and_the_same_data_kept_is_durable(tmp_path):
    throwaway = embedded.EmbeddedPostgres(tmp_path, throwaway=True)
    throwaway.start()
    try:
        assert durability(throwaway) == {"fsync": "off", "synchronous_commit": "off"}
    finally:
        throwaway.stop()

    kept = embedded.EmbeddedPostgres(tmp_path)
    kept.start()
    try:
        assert durability(kept) == {"fsync": "on", "synchronous_commit": "on"}
    finally:
        kept.stop()
