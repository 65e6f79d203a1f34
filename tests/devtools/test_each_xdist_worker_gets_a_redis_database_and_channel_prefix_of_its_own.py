"""`make test` runs the suite on pytest-xdist workers; each flushes its Redis database, so each must have its own
(devtools/pytest_workers.py): worker gwN takes database (base - N), and a count that would go below 0 is refused
naming what to change."""

from __future__ import annotations

import pytest

from devtools.pytest_workers import WorkerSetupError, worker_environment

CI = {"LATENCY_TEST_REDIS_URL": "redis://127.0.0.1:6379/15", "REDIS_URL": "redis://127.0.0.1:6379/15"}


def test_workers_count_down_from_the_suites_database_and_the_settings_follow():
    dbs = [worker_environment(CI, f"gw{n}") for n in range(3)]
    assert [env["LATENCY_TEST_REDIS_URL"] for env in dbs] == [f"redis://127.0.0.1:6379/{db}" for db in (15, 14, 13)]
    assert all(env["REDIS_URL"] == env["LATENCY_TEST_REDIS_URL"] for env in dbs)


def test_each_worker_has_its_own_channel_prefix():
    prefixes = {
        worker_environment({**CI, "LATENCY_CHANNEL_PREFIX": "ci"}, f"gw{n}")["LATENCY_CHANNEL_PREFIX"] for n in range(4)
    }
    assert prefixes == {"ci-gw0", "ci-gw1", "ci-gw2", "ci-gw3"}


def test_a_settings_redis_apart_from_the_suites_stays_where_it_is():
    env = worker_environment(
        {"LATENCY_TEST_REDIS_URL": "redis://127.0.0.1:6400/15", "REDIS_URL": "redis://127.0.0.1:6400/0"}, "gw1"
    )
    assert env["LATENCY_TEST_REDIS_URL"] == "redis://127.0.0.1:6400/14"
    assert "REDIS_URL" not in env


def test_a_unix_socket_url_keeps_its_path():
    env = worker_environment({"LATENCY_TEST_REDIS_URL": "unix:///run/redis/redis.sock?db=9"}, "gw2")
    assert env["LATENCY_TEST_REDIS_URL"] == "unix:///run/redis/redis.sock?db=7"


def test_more_workers_than_databases_below_the_base_is_refused_naming_the_way_out():
    with pytest.raises(WorkerSetupError, match=r"database 2 - 3 = -1.*XDIST"):
        worker_environment({"LATENCY_TEST_REDIS_URL": "redis://127.0.0.1:6379/2"}, "gw3")
