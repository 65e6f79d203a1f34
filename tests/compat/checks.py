"""What every compat module's test checks: the release installed is accepted, a release past the range and one
before it are refused with a message naming the library, the version and the range."""

from __future__ import annotations

import importlib
from importlib import metadata

import pytest

from probes.compat import UnsupportedVersion, require


def check_compat_module(module_name: str, distribution: str, past: str, before: str) -> None:
    module = importlib.import_module(module_name)
    assert metadata.version(distribution) == module.VERSION
    for found in (past, before):
        with pytest.raises(UnsupportedVersion) as refused:
            require(distribution, module.MINIMUM, module.BELOW, module=module_name, found=found)
        message = str(refused.value)
        assert f"{distribution} {found} is installed" in message
        assert f"{distribution} >={module.MINIMUM},<{module.BELOW}" in message
        assert module_name in message
