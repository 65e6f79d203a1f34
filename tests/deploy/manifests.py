"""deploy/compose.yaml and deploy/kubernetes/ read the way their tools read them, far enough for the tests to hold
them to the list of processes (deploy/processes.toml):

- compose: YAML with merge keys, then Compose's interpolation (${NAME}, ${NAME:-default}, ${NAME-default}, $$)
  with an empty environment, so every default is what runs;
- kustomize: a kustomization's resources (files and directories, recursively), configMapGenerator and
  secretGenerator (names and keys; the secret files are the operator's and are not read), patches (strategic
  merge of maps, as for a ConfigMap's data), namePrefix / nameSuffix with the ConfigMap and Secret references they
  rename, labels (with includeSelectors), images and namespace. Without the content hash kustomize appends to a
  generated name: nothing here depends on it.

Anything else in a kustomization makes it raise: the tests would otherwise check something other than what
`kubectl apply -k` applies."""

from __future__ import annotations

import copy
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.support import ROOT

DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
KUBERNETES = DEPLOY / "kubernetes"


# --- the list of processes ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Process:
    name: str
    image: str
    reads: str
    commands: list[list[str]]
    env: tuple[str, ...] = ()
    port: int | None = None
    health: str | None = None
    stop_seconds: int | None = None
    once: bool = False
    prepare: list[list[str]] = field(default_factory=list)


def processes() -> dict[str, Process]:
    found = tomllib.loads((DEPLOY / "processes.toml").read_text())
    return {
        name: Process(
            name=name,
            image=spec["image"],
            reads=spec["reads"],
            commands=spec["commands"],
            env=tuple(spec.get("env", ())),
            port=spec.get("port"),
            health=spec.get("health"),
            stop_seconds=spec.get("stop_seconds"),
            once=spec.get("once", False),
            prepare=spec.get("prepare", []),
        )
        for name, spec in found.items()
    }


# --- compose -----------------------------------------------------------------------------------------------------

_INTERPOLATION = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def interpolate(value: Any, environ: dict[str, str]) -> Any:
    """Compose's interpolation of every string in `value` (compose-spec, "Interpolation")."""
    if isinstance(value, dict):
        return {interpolate(k, environ): interpolate(v, environ) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, environ) for v in value]
    if not isinstance(value, str):
        return value

    def one(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1) or match.group(4)
        given = environ.get(name)
        if match.group(2) == ":-":
            return given if given else interpolate(match.group(3), environ)
        if match.group(2) == "-":
            return given if given is not None else interpolate(match.group(3), environ)
        return given or ""

    return _INTERPOLATION.sub(one, value)


def compose_raw(text: str | None = None) -> dict:
    """The compose file as YAML gives it (merge keys applied), before interpolation: what its schema checks."""
    return yaml.safe_load(COMPOSE.read_text() if text is None else text)


def compose(text: str | None = None, environ: dict[str, str] | None = None) -> dict:
    return interpolate(compose_raw(text), environ or {})


def environment_of(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {key: "" if value is None else str(value) for key, value in env.items()}


def duration_seconds(text: str) -> float:
    """A compose duration (10s, 1m30s, 500ms) in seconds."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001, "us": 1e-6}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|h|m|s)", str(text))
    if not parts or "".join(n + u for n, u in parts) != str(text):
        raise ValueError(f"{text!r} is not a compose duration")
    return sum(float(n) * units[u] for n, u in parts)


# --- kustomize ---------------------------------------------------------------------------------------------------

KNOWN_FIELDS = {
    "apiVersion",
    "kind",
    "resources",
    "configMapGenerator",
    "secretGenerator",
    "patches",
    "namePrefix",
    "nameSuffix",
    "labels",
    "images",
    "namespace",
}
REFERABLE = ("ConfigMap", "Secret")


class KustomizeError(ValueError):
    pass


def _generated(kind: str, spec: dict, folder: Path) -> dict:
    data: dict[str, str | None] = {}
    for literal in spec.get("literals", []):
        key, _, value = literal.partition("=")
        data[key] = value
    for item in spec.get("files", []):
        key, sep, path = item.partition("=")
        key = key if sep else Path(item).name
        # The file itself is the operator's (a Secret's), absent from the checkout: its name is what matters here.
        data[key] = None if kind == "Secret" else (folder / (path if sep else item)).read_text()
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": spec["name"]}, "data": data}


def _merge(base: Any, patch: Any) -> Any:
    if isinstance(base, dict) and isinstance(patch, dict):
        merged = dict(base)
        for key, value in patch.items():
            merged[key] = _merge(base.get(key), value) if key in base else value
        return merged
    if isinstance(base, list) or isinstance(patch, list):
        raise KustomizeError("a patch of a list: not supported by tests/deploy/manifests.py")
    return patch


def pod_spec(resource: dict) -> dict | None:
    if resource["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
        return resource["spec"]["template"]["spec"]
    return None


def containers(resource: dict, *, init: bool = True) -> list[dict]:
    spec = pod_spec(resource)
    if spec is None:
        return []
    return [*(spec.get("initContainers", []) if init else []), *spec.get("containers", [])]


def _rename_references(resource: dict, renamed: dict[tuple[str, str], str]) -> None:
    spec = pod_spec(resource)
    if spec is None:
        return
    for volume in spec.get("volumes", []):
        if "secret" in volume:
            volume["secret"]["secretName"] = renamed.get(
                ("Secret", volume["secret"]["secretName"]), volume["secret"]["secretName"]
            )
        if "configMap" in volume:
            volume["configMap"]["name"] = renamed.get(
                ("ConfigMap", volume["configMap"]["name"]), volume["configMap"]["name"]
            )
    for container in containers(resource):
        for source in container.get("envFrom", []):
            for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
                if key in source:
                    source[key]["name"] = renamed.get((kind, source[key]["name"]), source[key]["name"])
        for env in container.get("env", []):
            ref = env.get("valueFrom", {})
            for key, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
                if key in ref:
                    ref[key]["name"] = renamed.get((kind, ref[key]["name"]), ref[key]["name"])


def kustomize(folder: Path) -> list[dict]:
    """What `kustomize build folder` gives, as far as this module reads it (see its docstring)."""
    spec = yaml.safe_load((folder / "kustomization.yaml").read_text())
    unknown = set(spec) - KNOWN_FIELDS
    if unknown:
        raise KustomizeError(f"{folder}: {sorted(unknown)} not supported by tests/deploy/manifests.py")
    resources: list[dict] = []
    for entry in spec.get("resources", []):
        path = (folder / entry).resolve()
        if path.is_dir():
            resources.extend(kustomize(path))
        else:
            resources.extend(copy.deepcopy(doc) for doc in yaml.safe_load_all(path.read_text()) if doc)
    for generator in spec.get("configMapGenerator", []):
        resources.append(_generated("ConfigMap", generator, folder))
    for generator in spec.get("secretGenerator", []):
        resources.append(_generated("Secret", generator, folder))
    for patch in spec.get("patches", []):
        if set(patch) != {"path"}:
            raise KustomizeError(f"{folder}: only `patches: - path:` is supported by tests/deploy/manifests.py")
        doc = yaml.safe_load((folder / patch["path"]).read_text())
        targets = [
            i
            for i, r in enumerate(resources)
            if (r["kind"], r["metadata"]["name"]) == (doc["kind"], doc["metadata"]["name"])
        ]
        if len(targets) != 1:
            raise KustomizeError(f"{folder}: patch {patch['path']} matches {len(targets)} resources")
        resources[targets[0]] = _merge(resources[targets[0]], doc)
    prefix, suffix = spec.get("namePrefix", ""), spec.get("nameSuffix", "")
    if prefix or suffix:
        renamed = {}
        for resource in resources:
            old = resource["metadata"]["name"]
            resource["metadata"]["name"] = f"{prefix}{old}{suffix}"
            if resource["kind"] in REFERABLE:
                renamed[(resource["kind"], old)] = resource["metadata"]["name"]
        for resource in resources:
            _rename_references(resource, renamed)
    for label in spec.get("labels", []):
        for resource in resources:
            resource["metadata"].setdefault("labels", {}).update(label["pairs"])
            if label.get("includeSelectors") and pod_spec(resource) is not None:
                if resource["kind"] != "Job":
                    resource["spec"]["selector"]["matchLabels"].update(label["pairs"])
                resource["spec"]["template"]["metadata"].setdefault("labels", {}).update(label["pairs"])
    for image in spec.get("images", []):
        for resource in resources:
            for container in containers(resource):
                name, _, tag = container["image"].partition(":")
                if name == image["name"]:
                    container["image"] = f"{image.get('newName', name)}:{image.get('newTag', tag or 'latest')}"
    if "namespace" in spec:
        for resource in resources:
            resource["metadata"]["namespace"] = spec["namespace"]
    return resources
