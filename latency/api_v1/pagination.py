"""How lists are cut into pages: by page number for the configuration (small, sorted by key), by cursor for
measurements, so a page stays put while new rows arrive."""

from __future__ import annotations

from rest_framework import pagination

MAX_PAGE_SIZE = 1000


class PageNumberPagination(pagination.PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE


class MeasurementCursorPagination(pagination.CursorPagination):
    """Newest first; the cursor remembers a position (started_at, then id for rows started at the same moment),
    not an offset, so rows stored meanwhile neither repeat nor skip a row on the next page."""

    ordering = ("-started_at", "-id")
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
