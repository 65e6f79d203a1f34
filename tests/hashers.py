"""The password hasher of the test process.

Django's PBKDF2 hasher spends about a quarter of a second per password by design, and nearly every test of a page
makes a user or logs one in: at the default iterations the fast layer spent more time hashing than testing. This
one keeps the algorithm's name, so a hash it makes is an ordinary pbkdf2_sha256 hash with its iteration count
inside: the servers the tests start, on the production hasher, verify it (and upgrade it on a login, as they
would any older hash).
"""

from __future__ import annotations

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class QuickPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = 1_000
