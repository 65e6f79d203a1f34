"""`Authorization: Bearer <token>`: a user's API token (probes.apitokens), checked by its hash.

A request without that header is left to the next authenticator (the session); a wrong, revoked or malformed
token is refused (401) without its value in the answer or in a log."""

from __future__ import annotations

from django.utils.translation import gettext as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from probes.apitokens import tokens

KEYWORD = b"bearer"


class BearerTokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != KEYWORD:
            return None
        if len(parts) != 2:
            raise AuthenticationFailed(_("The Authorization header must be: Bearer <token>."))
        try:
            token = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise AuthenticationFailed(_("Invalid or revoked token.")) from None
        row = tokens.authenticate(token)
        if row is None:
            raise AuthenticationFailed(_("Invalid or revoked token."))
        return row.user, row

    def authenticate_header(self, request) -> str:
        # Makes DRF answer an unauthenticated request 401 (not 403), naming the scheme to use.
        return 'Bearer realm="api"'


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """The token as the schema's security scheme (HTTP bearer), so the docs page's "Authorize" asks for it."""

    target_class = BearerTokenAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": _("An API token: manage.py api_token USERNAME")}
