"""`make test` and `make test-fast` run with `--dist loadgroup`: the tests of an xdist group run on one worker, so an
expensive fixture they share (the region host's venv, a loaded demo history) is built once. pytest-xdist marks a
grouped test by a suffix of its node id; a pytest that drops the suffix scatters the group without a word
(pytest-dev/pytest-xdist#1386), which these tests catch."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.xdist_group("grouping_check")

WORKERS: set[str] = set()


def under_loadgroup(config) -> bool:
    return getattr(config, "workerinput", None) is not None and config.option.loadgroup


@pytest.mark.parametrize("n", range(4))
def test_a_grouped_test_carries_its_group_and_runs_where_the_others_did(request, n):
    if not under_loadgroup(request.config):
        pytest.skip("runs under pytest-xdist's --dist loadgroup (make test, make test-fast)")
    assert request.node.nodeid.endswith("@grouping_check")
    WORKERS.add(os.environ["PYTEST_XDIST_WORKER"])
    assert len(WORKERS) == 1
