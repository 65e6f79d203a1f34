"""Reading a file: YAML into typed rows, refusing what is not the format (unknown keys, wrong types, an object
named twice, a key given twice) and what is a secret, each with where it is.

What a value may be (a URL the engine can call, an interval of at least 10 s, a header that holds no literal
key) is not decided here: the admin's forms and the models' full_clean() decide it when the file is applied
(probes.config_as_code.apply), the one set of rules. This module knows only the shape of the file.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass
from typing import Any, get_type_hints

import apprise
import yaml

from probes.alerts.secrets import service_of
from probes.config_as_code.rows import BY_SECTION, CHANNELS, FORMAT_VERSION, KINDS, Kind, Row

# Keys someone might reach for to give a channel its URL: refused as secrets, with the way that works instead.
URL_KEYS = frozenset({"url", "apprise_url"})
APPRISE_URL_REFUSED = (
    "an Apprise URL is a secret and never goes in the file: name the environment variable that holds it in the "
    "channel's url_env (read when the file is applied)"
)


@dataclass(frozen=True)
class Problem:
    """Why a file (or one object of it) is refused. Never holds a value of the file: a value may be a secret."""

    where: str  # 'target "gpt-eu"', or 'targets[3]' when the object has no usable key yet
    field: str  # "" when the problem is the whole object
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.field}: {self.message}" if self.field else f"{self.where}: {self.message}"


@dataclass(frozen=True)
class Document:
    """A file's objects by section. A section the file leaves out is absent: the file does not manage that kind
    of object (apply leaves it alone, even with --prune), where an empty list says there are none."""

    sections: dict[str, list[Row]]

    def keys(self, section: str) -> set[tuple[str, ...]] | None:
        rows = self.sections.get(section)
        if rows is None:
            return None
        kind = BY_SECTION[section]
        return {kind.key_of(row) for row in rows}


class _Loader(yaml.SafeLoader):
    """safe_load, except that a key given twice in one mapping is refused: PyYAML would keep the last one
    silently, and the first, perhaps the one meant, would be ignored."""


def _mapping_without_duplicates(loader: _Loader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _value in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
            seen.add(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a key must be a plain value", key_node.start_mark
            ) from None
        if duplicate:
            raise yaml.constructor.ConstructorError(None, None, f"the key {key!r} is given twice", key_node.start_mark)
    return loader.construct_mapping(node, deep=True)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def _what(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _convert(hint: Any, value: Any) -> tuple[Any, str]:
    """(the row's value, "") or (None, why not). Messages name types, never the value."""
    optional = isinstance(hint, types.UnionType) and type(None) in hint.__args__
    if optional:
        if value is None:
            return None, ""
        (hint,) = [arg for arg in hint.__args__ if arg is not type(None)]
    if hint is str:
        if isinstance(value, str):
            return value, ""
        quote = " (quote it: YAML reads yes, no, on, off and bare numbers as other types)" if value is not None else ""
        return None, f"expected a string, got {_what(value)}{quote}"
    if hint is bool:
        return (value, "") if isinstance(value, bool) else (None, f"expected true or false, got {_what(value)}")
    if hint is int:
        whole = _is_number(value) and isinstance(value, int)
        return (value, "") if whole else (None, _expected("a whole number", value))
    if hint is float:
        if _is_number(value) and math.isfinite(value):
            return float(value), ""
        return None, _expected("a finite number", value)
    if hint == dict[str, str]:
        if not isinstance(value, dict):
            return None, _expected("a mapping of names to strings", value)
        for name, item in value.items():
            if not isinstance(name, str):
                return None, f"expected names that are strings, got {_what(name)}"
            if not isinstance(item, str):
                # A header's name is no secret (its value may be one): the message names it.
                return None, f"{name}: expected a string, got {_what(item)}"
        return dict(value), ""
    if hint == dict[str, float]:
        if not isinstance(value, dict):
            return None, _expected("a mapping of names to numbers", value)
        for name, item in value.items():
            if not isinstance(name, str):
                return None, f"expected names that are strings, got {_what(name)}"
            if not (_is_number(item) and math.isfinite(item)):
                # A region's slug is no secret: the message names it.
                return None, f"{name}: expected a finite number, got {_what(item)}"
        return {name: float(item) for name, item in value.items()}, ""
    if hint == tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return None, _expected("a list of names", value)
        if len(set(value)) != len(value):
            return None, "a name is listed twice"
        return tuple(sorted(value)), ""
    raise TypeError(f"no rule for {hint!r}")  # a row field of a type this module does not know: a bug here


def _expected(what: str, value: Any) -> str:
    return f"expected {what}, got {_what(value)}"


def _looks_like_apprise_url(text: str) -> str:
    """The service of an Apprise URL in `text` ("slack"), or "". A provider's http(s) endpoint is not one."""
    service = service_of(text)
    if not service or service in ("http", "https"):
        return ""
    # Apprise logs URLs it refuses, secrets and all; its logger writes nowhere (settings.LOGGING).
    return service if apprise.Apprise.instantiate(text.strip()) is not None else ""


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def defaults(kind: Kind) -> dict[str, Any]:
    """What a field left out of the file stands for: what a new object gets in the admin (the model's
    default), or nothing for a relation (every target, every region, no channel, no model group)."""
    from probes.config_as_code.export import model_of

    model = model_of(kind)
    hints = get_type_hints(kind.row)
    out: dict[str, Any] = {}
    for name in kind.field_names():
        if name in kind.required:
            continue
        if name in dict(kind.refs):
            out[name] = () if hints[name] == tuple[str, ...] else None
            continue
        value = model._meta.get_field(name).get_default()
        out[name] = dict(value) if isinstance(value, dict) else value
    return out


def _row(kind: Kind, index: int, item: Any, problems: list[Problem]) -> Row | None:
    where = f"{kind.section}[{index}]"
    if not isinstance(item, dict):
        problems.append(Problem(where, "", f"expected a mapping of fields, got {_what(item)}"))
        return None
    hints = get_type_hints(kind.row)
    names = kind.field_names()
    key_values = [item.get(name) for name in kind.key]
    if all(isinstance(value, str) for value in key_values):
        where = kind.label(tuple(key_values))
    found = len(problems)
    values = defaults(kind)
    for name, value in item.items():
        if name not in names:
            if kind is CHANNELS and name in URL_KEYS:
                problems.append(Problem(where, str(name), APPRISE_URL_REFUSED))
            else:
                problems.append(Problem(where, str(name), f"unknown key (the fields are: {', '.join(names)})"))
            continue
        converted, why = _convert(hints[name], value)
        if why:
            problems.append(Problem(where, name, why))
            continue
        values[name] = converted
    for name in names:
        if name in kind.required and name not in item:
            problems.append(Problem(where, name, "required"))
    for name, value in item.items():
        for text in _strings(value):
            service = _looks_like_apprise_url(text)
            if service:
                problems.append(Problem(where, str(name), f"holds a {service}:// URL: {APPRISE_URL_REFUSED}"))
                break
    if len(problems) > found:
        return None
    row: Row = kind.row(**{name: values[name] for name in names})
    return row


def parse(text: str, source: str = "the file") -> tuple[Document, list[Problem]]:
    """The file's rows, and every problem found (the document is usable only when there is none)."""
    problems: list[Problem] = []
    try:
        data = yaml.load(text, Loader=_Loader)  # _Loader is a SafeLoader: no arbitrary objects
    except yaml.YAMLError as exc:
        # Only where and what: PyYAML's own message quotes the line, which may hold a secret.
        mark = getattr(exc, "problem_mark", None)
        place = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        what = getattr(exc, "problem", None) or "not valid YAML"
        return Document({}), [Problem(source, "", f"{place}{what}")]
    if not isinstance(data, dict):
        return Document({}), [Problem(source, "", f"expected a mapping of sections, got {_what(data)}")]
    version = data.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        problems.append(Problem(source, "version", f"this site reads version {FORMAT_VERSION} files"))
    for name in data:
        if name != "version" and name not in BY_SECTION:
            known = ", ".join(["version", *(kind.section for kind in KINDS)])
            problems.append(Problem(source, str(name), f"unknown section (the sections are: {known})"))
    sections: dict[str, list[Row]] = {}
    for kind in KINDS:
        if kind.section not in data:
            continue
        items = data[kind.section]
        if not isinstance(items, list):
            problems.append(Problem(source, kind.section, _expected("a list (write [] for none)", items)))
            continue
        rows: list[Row] = []
        first: dict[tuple[str, ...], int] = {}
        for index, item in enumerate(items):
            row = _row(kind, index, item, problems)
            if row is None:
                continue
            key = kind.key_of(row)
            if key in first:
                problems.append(
                    Problem(kind.label(key), "", f"named twice ({kind.section}[{first[key]}] and [{index}])")
                )
                continue
            first[key] = index
            rows.append(row)
        sections[kind.section] = rows
    return Document(sections), problems


__all__ = ["Document", "Problem", "defaults", "parse"]
