"""The benchmarks run commands, build their environments and serve the site through one harness
(devtools/harness.py), shared with the tests: no bench script imports the test package, and no
copy of the harness lives in bench/."""

from __future__ import annotations

import ast

from tests.support import ROOT

HARNESS_FUNCTIONS = {"manage", "bench_env", "launch_chromium", "attach_recorder", "wait_for", "machine_context"}
HARNESS_CLASSES = {"UvicornServer", "Recorder"}


def _modules(path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_no_bench_script_imports_the_test_package():
    offenders = [
        f"{path.name}: {name}"
        for path in sorted((ROOT / "bench").glob("*.py"))
        for name in _modules(path)
        if name == "tests" or name.startswith("tests.")
    ]
    assert offenders == []


def test_the_harness_is_defined_once_in_devtools():
    """bench_env() stays a thin per-bench wrapper only where a bench adds its own refusals; the shared parts
    (running manage.py, the URLs, uvicorn, Chromium) are defined in devtools/harness.py alone."""
    defined: dict[str, list[str]] = {}
    for path in sorted([*(ROOT / "bench").glob("*.py"), *(ROOT / "tests").glob("*.py")]):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                defined.setdefault(node.name, []).append(path.relative_to(ROOT).as_posix())
    copies = {
        name: where for name, where in defined.items() if name in HARNESS_FUNCTIONS - {"bench_env"} | HARNESS_CLASSES
    }
    assert copies == {}
    harness = {
        node.name
        for node in ast.parse((ROOT / "devtools" / "harness.py").read_text()).body
        if isinstance(node, ast.FunctionDef | ast.ClassDef)
    }
    assert harness >= HARNESS_FUNCTIONS | HARNESS_CLASSES


def test_every_bench_env_builds_on_the_harness():
    for path in sorted((ROOT / "bench").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name == "bench_env":
                source = ast.get_source_segment(path.read_text(), node)
                assert "harness.bench_env(" in source, f"{path.name} builds its environment by hand"
