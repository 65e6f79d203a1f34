"""How deep JSON from people may nest: one bound for every JSON body and field we read (the API's parser,
the admin's JSON fields).

A document of 100,000 `[` makes json raise RecursionError, which the frameworks' parsers let through as a
500; one just shallow enough to parse can still exhaust the stack later, in validators, in the JSON written
back to a page or to the database. Nothing we take nests deeper than a few levels (a target's headers are an
object of strings), so the bound is generous, and it is checked as soon as the text is parsed."""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 32


class TooDeep(ValueError):
    """The document nests deeper than MAX_DEPTH (or than json can parse)."""


def nesting_depth(value: object) -> int:
    """How deep lists and objects nest in a parsed JSON value (a scalar is 0, [] is 1), without recursing."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def bounded(parse, *args: Any, **kwargs: Any) -> Any:
    """parse(*args, **kwargs) (json.loads, json.load or a framework's own), refused with TooDeep when the
    document nests deeper than MAX_DEPTH."""
    try:
        document = parse(*args, **kwargs)
    except RecursionError:
        raise TooDeep(MAX_DEPTH) from None
    if nesting_depth(document) > MAX_DEPTH:
        raise TooDeep(MAX_DEPTH)
    return document
