"""`manage.py api_token USERNAME` prints a new token, alone on its line: it works as that user, and the database
holds only its SHA-256 (no column anywhere holds the token)."""

from __future__ import annotations

import hashlib
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from probes.apitokens.models import ApiToken
from tests.api.conftest import bearer, grant

pytestmark = pytest.mark.django_db


def make_token(username: str, *args: str) -> str:
    out = StringIO()
    call_command("api_token", username, *args, stdout=out)
    return out.getvalue().strip()


def test_the_printed_token_works_as_its_user(client, django_user_model):
    user = django_user_model.objects.create_user("ops")
    grant(user, "view_region")
    token = make_token("ops", "--name", "deploy pipeline")
    assert token.startswith("lapi_") and "\n" not in token
    assert client.get("/api/v1/regions/", **bearer(token)).status_code == 200
    assert client.get("/api/v1/targets/", **bearer(token)).status_code == 403  # ops may not view targets
    row = ApiToken.objects.get(user=user)
    assert row.name == "deploy pipeline"
    assert row.last_used_at is not None


def test_only_the_tokens_hash_is_stored(django_user_model):
    django_user_model.objects.create_user("ops")
    token = make_token("ops")
    row = ApiToken.objects.get()
    assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM probes_apitoken")
        stored = cursor.fetchall()
    assert token not in repr(stored)
    assert token[5:] not in repr(stored)  # not even without its prefix


def test_each_run_makes_a_new_token_and_a_revoked_one_stops_working(client, django_user_model):
    from probes.apitokens.tokens import revoke

    user = django_user_model.objects.create_user("ops")
    grant(user, "view_region")
    first, second = make_token("ops"), make_token("ops")
    assert first != second
    revoke(ApiToken.objects.filter(token_hash=hashlib.sha256(first.encode()).hexdigest()))
    assert client.get("/api/v1/regions/", **bearer(first)).status_code == 401
    assert client.get("/api/v1/regions/", **bearer(second)).status_code == 200


def test_an_unknown_or_inactive_user_gets_no_token(django_user_model):
    django_user_model.objects.create_user("gone", is_active=False)
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        make_token("nobody")
    with pytest.raises(CommandError, match="inactive"):
        make_token("gone")
    assert not ApiToken.objects.exists()
