"""How lists are cut into pages: by page number for the configuration and incidents (small lists in a fixed
order), by key for measurements, so that a page stays put while new rows arrive."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime

from django import forms
from django.db.models import Q
from django.utils.translation import gettext as _
from rest_framework import pagination
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from probes.readings.slots import started_up_to
from probes.timeparse import in_range

MAX_PAGE_SIZE = 1000
PAGE_SIZE = 100


class PageNumberPagination(pagination.PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE


class PageForm(forms.Form):
    cursor = forms.CharField(required=False, max_length=200)
    page_size = forms.IntegerField(required=False, min_value=1, max_value=MAX_PAGE_SIZE)


def encode(started_at: datetime, row_id: int) -> str:
    return base64.urlsafe_b64encode(f"{started_at.isoformat()}|{row_id}".encode()).decode().rstrip("=")


def decode(cursor: str) -> tuple[datetime, int]:
    """The (started_at, id) a cursor names; ValueError when it names none."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        when, row_id = text.split("|")
        started_at = datetime.fromisoformat(when)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValueError(cursor) from None
    if started_at.tzinfo is None or not row_id.isascii() or not row_id.isdigit():
        raise ValueError(cursor)
    # A hand-made cursor may name a time the slot bounds cannot be computed around (year 1 at +14:00).
    return in_range(started_at), int(row_id)


class MeasurementCursorPagination(pagination.BasePagination):
    """Newest first, by (started_at, id). The cursor is the last row's key, not an offset: the next page is
    the rows strictly after it in that order, so rows stored meanwhile (newer ones, or ones started at the same
    moment as the last row) never repeat or push out a row. (DRF's CursorPagination breaks ties by an offset
    among equal times, which a new row at that time shifts.)"""

    def paginate_queryset(self, queryset, request, view=None):
        form = PageForm(request.query_params)
        if not form.is_valid():
            raise ValidationError({name: list(errors) for name, errors in form.errors.items()})
        self.request = request
        size = form.cleaned_data["page_size"] or PAGE_SIZE
        rows = queryset.order_by("-started_at", "-id")
        if cursor := form.cleaned_data["cursor"]:
            try:
                started_at, row_id = decode(cursor)
            except ValueError:
                raise ValidationError({"cursor": [_("Invalid cursor: follow the next link of a page.")]}) from None
            # The cursor's started_at bounds the slot too (probes.readings.slots): older slot-time partitions
            # only, which on a key-paged walk back through a long window leaves out the days already read.
            rows = rows.filter(
                Q(started_at__lt=started_at) | Q(started_at=started_at, id__lt=row_id), started_up_to(started_at)
            )
        page = list(rows[: size + 1])
        last = page[size - 1] if len(page) > size else None
        self.next = encode(last["started_at"], last["id"]) if last else None
        return page[:size]

    def get_next_link(self) -> str | None:
        if self.next is None:
            return None
        return replace_query_param(self.request.build_absolute_uri(), "cursor", self.next)

    def get_paginated_response(self, data) -> Response:
        return Response({"next": self.get_next_link(), "results": data})

    def get_paginated_response_schema(self, schema: dict) -> dict:
        return {
            "type": "object",
            "required": ["next", "results"],
            "properties": {
                "next": {"type": "string", "nullable": True, "format": "uri", "description": _("The next page.")},
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view) -> list[dict]:
        return [
            {
                "name": "cursor",
                "required": False,
                "in": "query",
                "description": _("Where the page starts: taken from the previous page's next link."),
                "schema": {"type": "string"},
            },
            {
                "name": "page_size",
                "required": False,
                "in": "query",
                "description": _("Rows per page (default 100)."),
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE},
            },
        ]
