"""What follows a change of a status page, whoever made it (the admin, the REST API, `atlas apply`)."""

from __future__ import annotations

from django.db import transaction


def forget_on_commit(*slugs: str | None) -> None:
    """Once the change commits, forget the cached copies of the pages under these slugs (a page renamed: its old
    and new slug). Readers are served the cached page until then (probes.statuspages.cache): a page made private,
    or its targets changed, shows so on the next request. A rolled-back change forgets nothing."""
    from probes.statuspages.cache import forget

    named = tuple(dict.fromkeys(slug for slug in slugs if slug))
    if named:
        transaction.on_commit(lambda: [forget(slug) for slug in named])
