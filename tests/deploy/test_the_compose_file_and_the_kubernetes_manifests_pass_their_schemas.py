"""deploy/compose.yaml is valid by the Compose specification's JSON schema (tests/deploy/schemas/compose-spec.json,
vendored: see schemas/README.md), and every Kubernetes resource of deploy/kubernetes/ (base, region worker, the
two-region overlay, each as kustomize builds it) by the Kubernetes API's own schemas for the oldest and the newest
release kubernetes-validate (pinned in pyproject.toml) bundles that we support, strictly: an unknown field fails.
A misspelt key or a wrong type fails either check, so a typo surfaces here rather than on a cluster."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest

from tests.deploy.manifests import KUBERNETES, compose_raw, kustomize

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "compose-spec.json").read_text())
KUBERNETES_RELEASES = ("1.32.0", "1.37.0")
FOLDERS = ("base", "region-worker", "overlays/two-regions")


def compose_errors(doc: dict) -> list[str]:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]


def test_the_compose_file_is_valid_by_the_compose_specification():
    assert compose_errors(compose_raw()) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("stop_grace_period: 30s", "stop_grace_perod: 30s"),
        ("    healthcheck:", "    healthchek:"),
        ("condition: service_completed_successfully", "condition: service_finished"),
    ],
)
def test_a_misspelt_compose_key_or_a_wrong_value_fails_the_schema(old, new):
    from tests.deploy.manifests import COMPOSE

    text = COMPOSE.read_text()
    assert old in text
    assert compose_errors(compose_raw(text.replace(old, new, 1))) != []


def resources() -> list[tuple[str, dict]]:
    found = []
    for folder in FOLDERS:
        for built in kustomize(KUBERNETES / folder):
            resource = copy.deepcopy(built)
            if resource["kind"] == "Secret":
                # Generated from the operator's files, which the checkout never holds: any value stands for them.
                resource["data"] = dict.fromkeys(resource["data"], "")
            found.append((f"{folder}: {resource['kind']} {resource['metadata']['name']}", resource))
    return found


RESOURCES = resources()


@pytest.mark.parametrize("release", KUBERNETES_RELEASES)
@pytest.mark.parametrize(("name", "resource"), RESOURCES, ids=[name for name, _ in RESOURCES])
def test_every_kubernetes_resource_is_valid_by_the_apis_schema(name, resource, release):
    kubernetes_validate.validate(resource, release, strict=True)


def test_a_misspelt_kubernetes_field_or_a_wrong_type_fails_the_schema():
    deployment = next(r for _, r in RESOURCES if r["kind"] == "Deployment")
    misspelt = copy.deepcopy(deployment)
    misspelt["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesytem"] = True
    wrong_type = copy.deepcopy(deployment)
    wrong_type["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = "ten"
    for broken in (misspelt, wrong_type):
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(broken, KUBERNETES_RELEASES[-1], strict=True)
