"""A file with a secret in it is refused as the admin refuses the same value, naming the object and the
field and never echoing the secret; nothing of the file is applied."""

from __future__ import annotations

import pytest
import yaml

from probes.models import Target
from tests.config_as_code.conftest import atlas, counts, export_text

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def _apply_with(tmp_path, change) -> tuple[str, str]:
    path = export_text(tmp_path)
    document = yaml.safe_load(path.read_text())
    change(document)
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    run = atlas("apply", str(path))
    return run.error, run.out


def _target(document, name="claude-eu"):
    return next(t for t in document["targets"] if t["name"] == name)


def _channel(document):
    return next(c for c in document["channels"] if c["name"] == "oncall")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda d: _target(d)["headers"].update({"x-api-key": SECRET}),
            'target "claude-eu": headers: Header "x-api-key" holds a literal secret',
        ),
        (
            lambda d: _target(d)["headers"].update({"Authorization": f"Bearer {SECRET}"}),
            'target "claude-eu": headers: Header "Authorization" holds a literal secret',
        ),
        (
            lambda d: _target(d).update(url=f"https://api.example.com/v1/chat/completions?key={SECRET}"),
            'target "claude-eu": url: Do not put the key in the URL (?key=)',
        ),
        (
            lambda d: _target(d).update(url=f"https://user:{SECRET}@api.example.com/v1/chat/completions"),
            'target "claude-eu": url: Do not put credentials in the URL',
        ),
    ],
    ids=["literal x-api-key", "literal bearer token", "key in the query", "password in the url"],
)
def test_a_provider_key_in_the_file_is_refused(configured, tmp_path, change, expected):
    before = counts()
    url = Target.objects.get(name="claude-eu").url

    error, _out = _apply_with(tmp_path, change)

    assert expected in error
    assert SECRET not in error
    assert counts() == before
    assert Target.objects.get(name="claude-eu").url == url


@pytest.mark.parametrize(
    "change",
    [
        lambda d: _channel(d).update(apprise_url=f"slack://T000/B000/{SECRET[:24]}"),
        lambda d: _channel(d).update(url=f"json://hooks.example.com/{SECRET}"),
        lambda d: _target(d).update(location_name=f"discord://4174216298/{SECRET}"),
    ],
    ids=["apprise_url", "url", "in another field"],
)
def test_an_apprise_url_anywhere_in_the_file_is_refused(configured, tmp_path, change):
    before = counts()

    error, _out = _apply_with(tmp_path, change)

    assert "an Apprise URL is a secret and never goes in the file" in error
    assert error.splitlines()[1].lstrip().startswith(('channel "oncall": ', 'target "claude-eu": location_name: '))
    assert SECRET not in error and SECRET[:24] not in error
    assert counts() == before
