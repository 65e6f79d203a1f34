"""`manage.py api_token USERNAME [--name NAME]`: a new token for the REST API (/api/v1/), acting as that user.

Prints the token alone on stdout, so `TOKEN=$(manage.py api_token alice)` captures it. The site keeps only its
hash: this is the one time it is shown (revoke it in the admin, and make another, if it is lost)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from probes.apitokens.tokens import issue


class Command(BaseCommand):
    help = "Make a REST API token for a user and print it (shown only this once; only its hash is kept)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="the user the token acts as, with that user's permissions")
        parser.add_argument("--name", default="", help='what the token is for, e.g. "deploy pipeline"')

    def handle(self, *args, **opts) -> None:
        users = get_user_model()._default_manager
        user = users.filter(**{get_user_model().USERNAME_FIELD: opts["username"]}).first()
        if user is None:
            raise CommandError(f"no user named {opts['username']!r}")
        if not user.is_active:
            raise CommandError(f"user {opts['username']!r} is inactive: a token of theirs would not work")
        try:
            _row, token = issue(user, opts["name"].strip())
        except ValidationError as exc:
            raise CommandError(
                "; ".join(f"{field}: {' '.join(errs)}" for field, errs in exc.message_dict.items())
            ) from None
        self.stdout.write(token)
