"""probes is the Django app and latency the project around it (settings, URLs, views, the Celery app): latency may
import probes, never the other way round, so probes can be read, tested and reused without the project. What
probes needs from the project it is given by name in the settings (LATENCY_CELERY_APP, probes.celery_app)."""

from __future__ import annotations

from tests.devtools.test_app_never_imports_devtools import _imports_of
from tests.support import ROOT


def test_no_probes_module_imports_latency():
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / "probes").rglob("*.py"))
        for name in _imports_of(path)
        if name == "latency" or name.startswith("latency.")
    ]
    assert offenders == []


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    """The moved imports were all inside functions: the check walks the whole tree, not the module's top."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from latency.celery import app\n    return app\n")
    assert _imports_of(module) == ["latency.celery"]
