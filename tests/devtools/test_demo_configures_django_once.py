"""`make demo` starts its services before Django reads its settings, so Django is configured once with
their URLs: no code re-points Django's database connections afterwards through private attributes."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.support import ROOT


def _private_rewiring(path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AugAssign | ast.AnnAssign)
            else []
        )
        for target in targets:
            text = ast.unparse(target)
            # Replacing a whole database entry after start-up, as the old demo command did (a tuning key such as
            # CONN_MAX_AGE set while settings load is not re-pointing).
            if "connections._connections" in text or text in ("settings.DATABASES", "settings.DATABASES['default']"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text}")
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "connections.__dict__.pop":
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_nothing_re_points_djangos_connections():
    found = [
        hit
        for package in ("latency", "probes", "devtools")
        for path in sorted((ROOT / package).rglob("*.py"))
        for hit in _private_rewiring(path)
    ]
    assert found == []


def test_the_demo_runner_leaves_django_unconfigured_until_its_services_run():
    """Importing the runner (and parsing its options) reads no settings: they are read only after the
    services have started and their URLs are in the environment."""
    code = (
        "import devtools.demo as d; d.parse_args(['--port', '8123']); from django.conf import settings; "
        "print(settings.configured)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
