"""Running independent rollup builds at once, each on a database connection of
its own: PostgreSQL runs an INSERT's SELECT on one core, so this is how a long
rebuild (rebuild_range's days, the series blocks' closing pass) uses more."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from django.db import connection

Item = TypeVar("Item")
Result = TypeVar("Result")


def side_by_side(build: Callable[[Item], Result], items: Iterable[Item], workers: int) -> list[Result]:
    """build(item) for every item, in order of the results, `workers` at a time.
    One after another instead with one worker or one item, and always inside a
    transaction: other connections could not see its uncommitted rows. The
    builds must share no row and no lock that could make them wait on each
    other."""
    items = list(items)
    if workers <= 1 or len(items) < 2 or connection.in_atomic_block:
        return [build(item) for item in items]

    def on_own_connection(item: Item) -> Result:
        try:
            return build(item)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(on_own_connection, items))
