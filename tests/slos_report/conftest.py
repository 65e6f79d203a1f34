"""The SLA report's tests share the objective pages' fixtures (tests/slos_pages/conftest.py), the API's roles
(tests/api/conftest.py) and the browser's (tests/browser/conftest.py) for printing the report to PDF."""

from tests.api.conftest import roles  # noqa: F401  (fixtures)
from tests.browser.conftest import asgi_server, browser_page  # noqa: F401  (fixtures)
from tests.slos_pages.conftest import known, signed_in  # noqa: F401  (fixtures)
