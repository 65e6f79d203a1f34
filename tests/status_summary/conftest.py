"""The status pages' scene (tests/status_pages/conftest.py)."""

from tests.status_pages.conftest import scene  # noqa: F401
