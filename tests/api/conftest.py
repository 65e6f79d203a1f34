"""The REST API's tests (/api/v1/).

- `roles`: users by role, each with an API token (`roles.viewer.token`): `viewer` holds the view permissions
  (regions, targets, probes, model groups, objectives, status pages, measurements, incidents, workers), `editor`
  those plus add, change and delete for regions, targets, probes, model groups, objectives and status pages,
  `nobody` no permission at all.
- `bearer(token)`: the Authorization header, for Django's test client (`client.get(url, **bearer(t))`).
- `site`: the site on a real uvicorn over the test database (committed data: transactional_db).
The browser fixtures (`browser_page`, `asgi_server`) are tests/browser's, for the docs page.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from devtools.harness import UvicornServer
from tests.browser.conftest import asgi_server, browser_page  # noqa: F401  (fixtures for the docs page)

CONFIG = ("region", "target", "probe", "modelgroup", "servicelevelobjective", "statuspage")
READ = (*CONFIG, "measurement", "incident", "worker")


@dataclass
class Role:
    user: object
    token: str


@dataclass
class Roles:
    viewer: Role
    editor: Role
    nobody: Role


def bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def grant(user, *codenames: str) -> None:
    from django.contrib.auth.models import Permission

    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="probes", codename__in=codenames))


@pytest.fixture
def roles(db) -> Roles:
    from django.contrib.auth import get_user_model

    from probes.apitokens.tokens import issue

    users = get_user_model().objects
    made = {}
    for name in ("viewer", "editor", "nobody"):
        # No password: hashing one costs most of a second, and these users sign in by token or force_login.
        user = users.create_user(name, f"{name}@example.org")
        made[name] = Role(user, issue(user, f"{name}'s script")[1])
    grant(made["viewer"].user, *(f"view_{m}" for m in READ))
    grant(made["editor"].user, *(f"view_{m}" for m in READ))
    grant(made["editor"].user, *(f"{verb}_{m}" for m in CONFIG for verb in ("add", "change", "delete")))
    return Roles(**made)


@pytest.fixture
def site(transactional_db, test_redis_url, settings, tmp_path, request) -> Iterator[UvicornServer]:
    from tests.conftest import running_site

    yield from running_site(request, settings, test_redis_url, tmp_path, channel="api", collect_static=False)
