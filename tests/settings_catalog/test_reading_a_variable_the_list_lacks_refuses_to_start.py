"""A getter of latency.env asked for a variable the one list of settings does not declare, or for one declared
with another type, refuses to start: a new setting cannot be read without being listed (and documented)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from latency.env import env_bool, env_int, env_str


def test_an_undeclared_variable_is_refused_even_when_it_is_unset(monkeypatch):
    monkeypatch.delenv("LATENCY_NOT_IN_THE_LIST", raising=False)
    with pytest.raises(ImproperlyConfigured, match="LATENCY_NOT_IN_THE_LIST is read but not declared"):
        env_str("LATENCY_NOT_IN_THE_LIST")


def test_a_variable_read_as_another_type_than_declared_is_refused():
    with pytest.raises(ImproperlyConfigured, match="LATENCY_PUBLIC_DASHBOARD is declared as bool, read as int"):
        env_int("LATENCY_PUBLIC_DASHBOARD")


def test_a_declared_variable_reads_its_default_and_bounds_from_the_list(monkeypatch):
    monkeypatch.delenv("LATENCY_DB_POOL_MIN", raising=False)
    assert env_int("LATENCY_DB_POOL_MIN") == 2
    monkeypatch.setenv("LATENCY_DB_POOL_MIN", "101")
    with pytest.raises(ImproperlyConfigured, match="LATENCY_DB_POOL_MIN=101 is above the maximum 100"):
        env_int("LATENCY_DB_POOL_MIN")
    monkeypatch.delenv("LATENCY_PUBLIC_DASHBOARD", raising=False)
    assert env_bool("LATENCY_PUBLIC_DASHBOARD") is False
