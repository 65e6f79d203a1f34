"""The login lockout as production serves it: a real uvicorn process (the async middleware path), a browser-like
client posting the form with its CSRF token."""

from __future__ import annotations

import re

import httpx
import pytest
from django.db import connection

from devtools.harness import UvicornServer
from tests.conftest import _database_url

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

PASSWORD = "a-long-test-password-8812"


def post_login(server: UvicornServer, username: str, password: str) -> httpx.Response:
    with httpx.Client(base_url=server.origin, timeout=30) as client:
        form = client.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
        return client.post(
            "/accounts/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token},
            headers={"Referer": f"{server.origin}/accounts/login/"},
        )


def test_the_served_login_form_locks_out_after_the_limit(django_user_model, tmp_path):
    django_user_model.objects.create_user(username="carol", password=PASSWORD)
    env = {"DATABASE_URL": _database_url(connection.settings_dict), "LATENCY_LOGIN_FAILURE_LIMIT": "3"}
    with UvicornServer(env, tmp_path / "uvicorn.log", access_log=False, collect_static=False) as server:
        assert post_login(server, "carol", PASSWORD).status_code == 302  # the form works, and resets nothing odd
        statuses = [post_login(server, "carol", "wrong").status_code for _ in range(3)]
        assert statuses[:2] == [200, 200] and statuses[2] == 429, statuses
        refused = post_login(server, "carol", PASSWORD)
        assert refused.status_code == 429
        assert "Too many failed sign-ins" in refused.text
        assert "Try again in 15 minutes" in refused.text
        assert "content-security-policy" in refused.headers
