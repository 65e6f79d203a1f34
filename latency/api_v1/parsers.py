"""Request bodies: DRF's JSON parser with the site's depth bound (probes.jsondepth), a 400 instead of the
RecursionError (a 500) DRF's own lets through on a body of 100,000 `[`."""

from __future__ import annotations

from django.utils.translation import gettext as _
from rest_framework import parsers
from rest_framework.exceptions import ParseError

from probes.jsondepth import MAX_DEPTH, TooDeep, bounded


class JSONParser(parsers.JSONParser):
    """REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]: DRF's, bounded in depth."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return bounded(super().parse, stream, media_type, parser_context)
        except TooDeep:
            raise ParseError(
                _("JSON parse error - the body nests deeper than %(depth)d levels") % {"depth": MAX_DEPTH}
            ) from None
