"""Development tooling (embedded servers, the mock LLM server, the demo runner, the bench harness)
lives in devtools/, which a deployment never gets: the app packages must not import it, and the
package list in pyproject.toml must not ship it."""

from __future__ import annotations

import ast
import tomllib

from tests.support import ROOT

APP_PACKAGES = ("latency", "probes")


def _imports_of(path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", "")) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.append(str(node.args[0].value))
    return names


def test_no_app_module_imports_devtools():
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for package in APP_PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for name in _imports_of(path)
        if name == "devtools" or name.startswith("devtools.")
    ]
    assert offenders == []


def test_no_app_module_mentions_devtools_as_a_dotted_path():
    """Strings name modules too (settings, INSTALLED_APPS, subprocess argv)."""
    offenders = [
        str(path.relative_to(ROOT))
        for package in APP_PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "devtools." in path.read_text() or "devtools import" in path.read_text()
    ]
    assert offenders == []


def test_the_distribution_packages_only_the_app():
    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert sorted(find["include"]) == ["latency*", "probes*"]
    assert not any(pattern.startswith("devtools") for pattern in find["include"])


def test_the_development_tools_are_out_of_the_app_packages():
    for module in (
        "embedded.py",
        "mockllm.py",
        "mockformats.py",
        "management/commands/mockllm.py",
        "management/commands/demo.py",
        "demo_seed.py",
    ):
        for package in APP_PACKAGES:
            assert not (ROOT / package / module).exists(), f"{package}/{module} is development tooling"
