"""The file's shape is checked before anything is read from the database: unknown sections and fields, wrong
types, missing required fields, an object or a key given twice, each refused with where it is."""

from __future__ import annotations

import pytest

from tests.config_as_code.conftest import atlas, counts

REGION = "- slug: eu-paris\n  name: Paris\n  city: Paris\n  country: FR\n  latitude: 48.9\n  longitude: 2.35\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("targetz: []\n", "f.yaml: targetz: unknown section"),
        (f"regions:\n{REGION}  colour: blue\n", 'region "eu-paris": colour: unknown key (the fields are: slug,'),
        (f"regions:\n{REGION}  active: 'yes'\n", 'region "eu-paris": active: expected true or false, got a string'),
        (
            "regions:\n- slug: eu-oslo\n  name: Oslo\n  city: Oslo\n  country: NO\n  latitude: 59.9\n"
            "  longitude: 10.7\n",
            'region "eu-oslo": country: expected a string, got a boolean (quote it',
        ),
        (
            "targets:\n- name: t\n  url: https://x.example/v1\n  headers: {a: 1}\n",
            'target "t": headers: a: expected a string, got a whole number',
        ),
        ("probes:\n- target: t\n  name: p\n  regions: eu\n", 'probe "t / p": regions: expected a list of names'),
        ("probes:\n- target: t\n  name: p\n  regions: [a, a]\n", 'probe "t / p": regions: a name is listed twice'),
        ("probes:\n- target: t\n  name: p\n  regions: [a]\n  max_tokens: 1.5\n", "max_tokens: expected a whole"),
        ("targets:\n- name: t\n", 'target "t": url: required'),
        ("targets:\n- url: https://x.example/v1\n", "targets[0]: name: required"),
        ("targets:\n- just a string\n", "targets[0]: expected a mapping of fields, got a string"),
        ("targets:\n", "f.yaml: targets: expected a list (write [] for none), got null"),
        (f"regions:\n{REGION}{REGION}", 'region "eu-paris": named twice (regions[0] and [1])'),
        ("version: 2\n", "f.yaml: version: this site reads version 1 files"),
        ("regions: []\nregions: []\n", "f.yaml: line 2, column 1: the key 'regions' is given twice"),
        ("regions: [\n", "f.yaml: line 2, column 1:"),
    ],
)
def test_the_shape_of_the_file_is_checked(db, tmp_path, text, expected):
    path = tmp_path / "f.yaml"
    path.write_text(text)
    before = counts()

    run = atlas("apply", str(path))

    assert expected in run.error.replace(str(tmp_path) + "/", "")
    assert counts() == before
