"""The site hashes passwords with Django's production PBKDF2 at its full iterations; the tests' quicker hasher
(tests/hashers.py) is set by tests/conftest.py for the test process only, and its hashes are ones the production
hasher verifies, so the servers the tests start accept the users the tests make."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from django.contrib.auth.hashers import PBKDF2PasswordHasher, make_password

ROOT = Path(__file__).resolve().parents[2]


def test_the_sites_first_hasher_is_the_full_strength_pbkdf2():
    # A fresh interpreter: this one's settings are the tests'.
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.contrib.auth.hashers import get_hasher; "
            "h = get_hasher(); print(type(h).__module__, type(h).__name__, h.iterations)",
        ],
        cwd=ROOT,
        env={"DJANGO_SETTINGS_MODULE": "latency.settings", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    assert out[:2] == ["django.contrib.auth.hashers", "PBKDF2PasswordHasher"]
    assert int(out[2]) >= PBKDF2PasswordHasher.iterations


def test_a_password_hashed_in_the_tests_verifies_with_the_production_hasher():
    encoded = make_password("a-long-test-password-5512")
    assert encoded.startswith("pbkdf2_sha256$")
    assert PBKDF2PasswordHasher().verify("a-long-test-password-5512", encoded)
    assert not PBKDF2PasswordHasher().verify("another-password", encoded)
