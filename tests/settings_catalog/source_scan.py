"""The environment variables our code reads by a name written in it: calls of latency.env's getters and the
worker's _number, os.environ.get / os.getenv / os.environ[...] / `in os.environ`, and the same on a mapping
named env. A name held in a module constant, or looped over from a tuple of names, counts as written; a name
computed at run time (the variable a target names for its key) is the target's, not ours, and is not found."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.support import ROOT

SCANNED = ("latency", "probes")
GETTERS = {"env_str", "env_bool", "env_int", "env_float", "env_list", "env_addresses"}
ENV_NAMES = {"env", "environ"}


def sources() -> list[Path]:
    return sorted(path for top in SCANNED for path in (ROOT / top).rglob("*.py") if "migrations" not in path.parts)


def _is_environ(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "environ" and _is_os(node.value)
    return isinstance(node, ast.Name) and node.id in ENV_NAMES


def _strings(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Tuple | ast.List):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _name_argument(call: ast.Call) -> ast.expr:
    """The argument that names the variable when `call` reads one (else a constant that names nothing)."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in GETTERS:
        return call.args[0]
    if isinstance(func, ast.Name) and func.id == "_number" and len(call.args) >= 2:
        return call.args[1]
    if isinstance(func, ast.Attribute) and func.attr == "get" and _is_environ(func.value):
        return call.args[0]
    if isinstance(func, ast.Attribute) and func.attr == "getenv" and _is_os(func.value):
        return call.args[0]
    return ast.Constant(None)


def _is_os(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "os"


def names_read(path: Path) -> Iterator[tuple[str, int]]:
    """(variable, line) for each read of a variable by a name the code spells out."""
    tree = ast.parse(path.read_text(), str(path))
    known: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    known.setdefault(target.id, []).append(node.value.value)
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and _strings(node.iter):
            known.setdefault(node.target.id, []).extend(_strings(node.iter))

    def resolve(arg: ast.expr) -> list[str]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return [arg.value]
        if isinstance(arg, ast.Name):
            return known.get(arg.id, [])
        return []

    for node in ast.walk(tree):
        found: list[str] = []
        if isinstance(node, ast.Call) and node.args:
            found = resolve(_name_argument(node))
        elif isinstance(node, ast.Subscript) and _is_environ(node.value) and isinstance(node.ctx, ast.Load):
            found = resolve(node.slice)
        elif (
            isinstance(node, ast.Compare)
            and isinstance(node.ops[0], ast.In | ast.NotIn)
            and _is_environ(node.comparators[0])
        ):
            found = resolve(node.left)
        for name in found:
            yield name, node.lineno


def prefixes_joined() -> set[str]:
    """String constants a name is built from ("LATENCY_REGION_KEY_" + slug): how a prefix entry is read."""
    found = set()
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Constant):
                found.add(str(node.left.value))
    return found


def every_read() -> dict[str, list[str]]:
    """Each variable read, with the places (path:line) that read it."""
    reads: dict[str, list[str]] = {}
    for path in sources():
        for name, line in names_read(path):
            reads.setdefault(name, []).append(f"{path.relative_to(ROOT)}:{line}")
    return reads
