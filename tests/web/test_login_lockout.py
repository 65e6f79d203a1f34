"""Repeated failed sign-ins lock out the username and, separately, the address (django-axes).

Both login forms (/accounts/login/ and /admin/login/) go through django.contrib.auth.authenticate, where the
axes backend refuses a locked-out username or address before the password hasher runs. Time is moved with
time-machine, never slept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-test-password-6617"
LIMIT = 3
LOCKED_TEXT = "Too many failed sign-ins"
FORMS = ["/accounts/login/", "/admin/login/"]


class CountingHasher(PBKDF2PasswordHasher):
    """A real PBKDF2 hasher (few iterations, for speed) that counts how often the expensive part runs."""

    algorithm = "pbkdf2_counting"
    iterations = 1000
    runs = 0

    def encode(self, password, salt, iterations=None):
        CountingHasher.runs += 1
        return super().encode(password, salt, iterations)


@pytest.fixture(autouse=True)
def lockout_settings(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    settings.PASSWORD_HASHERS = ["tests.web.test_login_lockout.CountingHasher"]


@pytest.fixture
def staff(django_user_model):
    for name in ("alice", "bob"):
        django_user_model.objects.create_user(username=name, password=PASSWORD, is_staff=True, is_superuser=True)


def sign_in(form: str, username: str, password: str, address: str = "192.0.2.10", **headers):
    client = Client()
    response = client.post(form, {"username": username, "password": password}, REMOTE_ADDR=address, **headers)
    signed_in = "_auth_user_id" in client.session
    return response, signed_in


def fail(form: str, username: str, times: int, address: str = "192.0.2.10", **headers) -> None:
    # The failure that reaches the limit is already answered with the lockout page.
    for _ in range(times):
        response, signed_in = sign_in(form, username, "wrong-password", address, **headers)
        assert not signed_in and response.status_code in (200, 429), response.status_code


@pytest.mark.parametrize("form", FORMS)
def test_after_repeated_failures_the_right_password_is_refused_with_a_message(staff, form):
    fail(form, "alice", LIMIT)
    response, signed_in = sign_in(form, "alice", PASSWORD)
    assert not signed_in
    assert response.status_code == 429
    assert LOCKED_TEXT in response.content.decode()
    assert "Try again in 15 minutes" in response.content.decode()


@pytest.mark.parametrize("form", FORMS)
def test_another_username_from_the_same_address_is_refused_after_the_address_limit(staff, form):
    # One failure per name, all from one address: no username reaches the limit, the address does.
    for name in ("mallory", "trent", "eve"):
        fail(form, name, 1, address="198.51.100.7")
    response, signed_in = sign_in(form, "bob", PASSWORD, address="198.51.100.7")
    assert not signed_in and response.status_code == 429
    # The same user from elsewhere is not locked: the address was.
    assert sign_in(form, "bob", PASSWORD, address="203.0.113.20")[1]


def test_a_username_is_locked_from_every_address(staff):
    for i in range(LIMIT):
        fail("/accounts/login/", "alice", 1, address=f"203.0.113.{i + 1}")
    response, signed_in = sign_in("/accounts/login/", "alice", PASSWORD, address="203.0.113.200")
    assert not signed_in and response.status_code == 429
    # Another user from that fresh address is unaffected.
    assert sign_in("/accounts/login/", "bob", PASSWORD, address="203.0.113.200")[1]


def test_the_lock_lifts_after_the_cool_off(staff):
    with time_machine.travel(datetime(2026, 3, 1, 12, 0, tzinfo=UTC), tick=False) as clock:
        fail("/accounts/login/", "alice", LIMIT)
        clock.shift(timedelta(minutes=14))
        assert sign_in("/accounts/login/", "alice", PASSWORD)[0].status_code == 429
        clock.shift(timedelta(minutes=16))
        response, signed_in = sign_in("/accounts/login/", "alice", PASSWORD)
        assert signed_in, response.status_code


def test_the_reset_command_lifts_the_lock_at_once(staff):
    from django.core.management import call_command

    fail("/admin/login/", "alice", LIMIT)
    assert not sign_in("/admin/login/", "alice", PASSWORD, address="203.0.113.9")[1]
    call_command("axes_reset_username", "alice", verbosity=0)
    call_command("axes_reset_ip", "192.0.2.10", verbosity=0)
    assert sign_in("/admin/login/", "alice", PASSWORD)[1]


def test_locked_out_attempts_never_run_the_password_hasher(staff):
    fail("/accounts/login/", "alice", LIMIT)
    before = CountingHasher.runs
    for _ in range(5):
        assert sign_in("/accounts/login/", "alice", "wrong-password")[0].status_code == 429
        assert sign_in("/accounts/login/", "alice", PASSWORD)[0].status_code == 429
    assert CountingHasher.runs == before


def test_a_forged_forwarded_for_does_not_escape_the_address_lock(staff):
    # The peer is no trusted proxy: whatever X-Forwarded-For says, failures count against the peer.
    for i in range(LIMIT):
        fail("/accounts/login/", f"user{i}", 1, address="198.51.100.9", HTTP_X_FORWARDED_FOR=f"10.9.9.{i}")
    response, signed_in = sign_in(
        "/accounts/login/", "bob", PASSWORD, address="198.51.100.9", HTTP_X_FORWARDED_FOR="10.9.9.250"
    )
    assert not signed_in and response.status_code == 429


def test_behind_a_trusted_proxy_clients_are_counted_by_their_own_address(staff, settings):
    from probes.proxy import parse_proxies

    settings.LATENCY_TRUSTED_PROXY_NETWORKS = parse_proxies(["10.0.0.2"])
    for name in ("mallory", "trent", "eve"):
        fail("/accounts/login/", name, 1, address="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.66")
    # The locked client behind the proxy is refused; another client behind the same proxy is not.
    locked = sign_in("/accounts/login/", "bob", PASSWORD, address="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.66")
    assert locked[0].status_code == 429
    assert sign_in("/accounts/login/", "bob", PASSWORD, address="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.67")[1]


def test_signing_in_to_ones_own_account_does_not_wipe_the_count_of_guesses_at_another(staff):
    fail("/accounts/login/", "alice", LIMIT - 1, address="198.51.100.30")
    assert sign_in("/accounts/login/", "bob", PASSWORD, address="198.51.100.30")[1]
    fail("/accounts/login/", "alice", 1, address="198.51.100.31")
    response, signed_in = sign_in("/accounts/login/", "alice", PASSWORD, address="203.0.113.77")
    assert not signed_in and response.status_code == 429
