"""deploy/kubernetes/ (the base with the two-region overlay, built as kustomize builds it: tests/deploy/manifests.py)
runs each process of deploy/processes.toml with its command, the variables it reads and requires, its secrets as
files, a grace period of at least its stop timeout, liveness and readiness probes on its health endpoints, the
migrate Job's migrations before the rest, hardened pods and resource requests; each alteration that breaks one of
those is caught. The overlay's two region workers are apart: their own region, Secret and pods."""

from __future__ import annotations

import copy

import pytest

from tests.deploy.drift import kubernetes_problems
from tests.deploy.manifests import KUBERNETES, containers, kustomize, processes

PROCS = processes()
OVERLAY = kustomize(KUBERNETES / "overlays" / "two-regions")


def test_the_two_region_overlay_runs_every_process_of_the_list_as_the_list_says():
    assert kubernetes_problems(OVERLAY, PROCS) == []


def test_the_base_runs_the_central_processes_and_leaves_the_workers_to_a_region():
    problems = kubernetes_problems(kustomize(KUBERNETES / "base"), PROCS)
    assert problems == [f"no Kubernetes workload runs worker ({PROCS['worker'].commands})"]


def test_the_overlays_two_region_workers_each_have_their_region_secret_and_pods():
    workers = [
        r for r in OVERLAY if r["kind"] == "Deployment" and r["metadata"]["name"].startswith("latency-atlas-worker")
    ]
    maps = {r["metadata"]["name"]: r["data"] for r in OVERLAY if r["kind"] == "ConfigMap"}
    secrets = {r["metadata"]["name"]: r["data"] for r in OVERLAY if r["kind"] == "Secret"}
    seen = {}
    for worker in workers:
        (container,) = containers(worker)
        (region_ref,) = [e["valueFrom"]["configMapKeyRef"] for e in container["env"] if e["name"] == "LATENCY_REGION"]
        (secret,) = [v["secret"]["secretName"] for v in worker["spec"]["template"]["spec"]["volumes"] if "secret" in v]
        assert set(secrets[secret]) == {"key", "broker-url"}
        seen[maps[region_ref["name"]]["LATENCY_REGION"]] = (secret, str(worker["spec"]["selector"]["matchLabels"]))
    assert sorted(seen) == ["af-lagos", "eu-frankfurt"]
    assert len({s for s, _ in seen.values()}) == 2 and len({sel for _, sel in seen.values()}) == 2
    for resource in OVERLAY:
        assert resource["metadata"]["namespace"] == "latency-atlas"
        for container in containers(resource):
            assert container["image"].startswith("registry.example.org/latency-atlas")


def _deployment(docs: list[dict], name: str) -> dict:
    return next(r for r in docs if r["kind"] in ("Deployment", "Job") and r["metadata"]["name"] == name)


def _alter(name: str, change) -> list[dict]:
    docs = copy.deepcopy(OVERLAY)
    change(_deployment(docs, name))
    return docs


def _main(resource: dict) -> dict:
    return resource["spec"]["template"]["spec"]["containers"][0]


def _env(resource: dict, name: str, value: str | None) -> None:
    env = [e for e in _main(resource)["env"] if e["name"] != name]
    _main(resource)["env"] = env if value is None else [*env, {"name": name, "value": value}]


WEB, INGEST, SCHEDULER = "latency-atlas-web", "latency-atlas-ingest", "latency-atlas-scheduler"
LAGOS, MIGRATE = "latency-atlas-worker-af-lagos", "latency-atlas-migrate"
ALTERED = {
    "the readiness probe on /healthz": (
        _alter(WEB, lambda r: _main(r)["readinessProbe"]["httpGet"].update(path="/healthz")),
        "readinessProbe does not ask /readyz on port 8000",
    ),
    "the liveness probe on another port": (
        _alter(LAGOS, lambda r: _main(r)["livenessProbe"]["httpGet"].update(port=9000)),
        "livenessProbe does not ask /healthz on port 8081",
    ),
    "a shorter grace period": (
        _alter(INGEST, lambda r: r["spec"]["template"]["spec"].update(terminationGracePeriodSeconds=5)),
        "gives SIGTERM 5 s, less than ingest's 10 s",
    ),
    "no wait for the migrations": (
        _alter(SCHEDULER, lambda r: r["spec"]["template"]["spec"].pop("initContainers")),
        "has no init container waiting for the migrations",
    ),
    "the worker's concurrency changed": (
        _alter(LAGOS, lambda r: _main(r).update(args=["--concurrency", "5", "--loglevel", "INFO"])),
        f"Deployment {LAGOS} runs None ['--concurrency', '5', '--loglevel', 'INFO']: not in the list",
    ),
    "the web's settings given to the ingest worker": (
        _alter(INGEST, lambda r: _main(r)["envFrom"].append({"configMapRef": {"name": "latency-atlas-site"}})),
        "sets ALLOWED_HOSTS, which ingest does not read",
    ),
    "a ConfigMap that is not there": (
        _alter(WEB, lambda r: _main(r)["envFrom"].append({"configMapRef": {"name": "latency-atlas-web"}})),
        "names the ConfigMap latency-atlas-web, which is not among the resources",
    ),
    "the credential left out": (
        _alter(LAGOS, lambda r: _env(r, "LATENCY_REGION_KEY_FILE", None)),
        "does not set LATENCY_REGION_KEY, which worker requires",
    ),
    "a secret as a value": (
        _alter(MIGRATE, lambda r: (_env(r, "SECRET_KEY_FILE", None), _env(r, "SECRET_KEY", "x" * 50))),
        "gives the secret SECRET_KEY as a value",
    ),
    "the web on another port": (
        _alter(WEB, lambda r: _env(r, "UVICORN_PORT", "8080")),
        "does not listen on the list's port 8000",
    ),
    "a writable root": (
        _alter(WEB, lambda r: _main(r)["securityContext"].update(readOnlyRootFilesystem=False)),
        "container web has a writable root",
    ),
    "root allowed": (
        _alter(SCHEDULER, lambda r: r["spec"]["template"]["spec"]["securityContext"].pop("runAsNonRoot")),
        "may run as root",
    ),
    "no memory request": (
        _alter(INGEST, lambda r: _main(r)["resources"]["requests"].pop("memory")),
        "container ingest requests no memory",
    ),
    "migrate as a Deployment": (
        _alter(MIGRATE, lambda r: r.update(kind="Deployment")),
        "runs migrate, which runs once, not as a Job",
    ),
}


@pytest.mark.parametrize("altered", ALTERED)
def test_altered_manifests_are_caught(altered):
    docs, expected = ALTERED[altered]
    problems = kubernetes_problems(docs, PROCS)
    assert any(expected in problem for problem in problems), problems


def test_the_compose_file_and_the_manifests_run_as_the_images_user():
    """The volumes' and Secrets' files are made readable for user and group 10001: the images' own (their
    Containerfiles' USER, checked when they are in the checkout)."""
    from tests.deploy.drift import image_kind
    from tests.deploy.manifests import DEPLOY, compose

    for name, service in compose()["services"].items():
        if image_kind(service.get("image", "")) != "other" and name != "init-secrets":
            assert service["user"] == "10001:10001", name
    for resource in OVERLAY:
        spec = resource["spec"]["template"]["spec"] if resource["kind"] in ("Deployment", "Job") else None
        if spec is not None:
            context = spec["securityContext"]
            assert (context["runAsUser"], context["runAsGroup"], context["fsGroup"]) == (10001, 10001, 10001)
    for containerfile in (DEPLOY.parent / "Containerfile", DEPLOY.parent / "Containerfile.worker"):
        if containerfile.exists():
            users = [line.split()[1] for line in containerfile.read_text().splitlines() if line.startswith("USER ")]
            assert users and users[-1] == "10001:10001", containerfile.name
