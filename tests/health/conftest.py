"""Fixtures shared with the dashboard's tests."""

from tests.web.conftest import viewer  # noqa: F401  (a signed-in user on the test's client)
