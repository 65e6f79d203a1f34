"""Where the compose file, the Kubernetes manifests and the systemd units part from the list of processes
(deploy/processes.toml) and the list of settings (probes/conf/catalog.py): each function returns the problems it
finds, one sentence each, empty when the runner does what the lists say. The tests call them on the files in
deploy/ (no problem) and on altered copies (the alteration named), so a check that cannot fail fails too.

What every runner must do, from the lists:
- run each process with the list's command: the role given to the central image's entrypoint, the worker
  image's arguments after its entrypoint (`latency-atlas worker`), the unit's ExecStart (the venv's bin/ first);
- set only variables the process reads (the catalogue's readers of its `reads`, or the list's `env`; NAME_FILE
  for a secret NAME), and every one it requires;
- give a secret as a file unless it holds no credential (a broker URL without a password, on a private network);
- let SIGTERM end it: at least `stop_seconds` before SIGKILL;
- ask /healthz and /readyz where the list's `health` says, on the port the process is given;
- run the `once` process to completion before the others of its image start.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from probes.conf.catalog import CENTRAL, SETTINGS, WORKER, Setting
from probes.worker.config import key_variable
from tests.deploy.manifests import Process, containers, duration_seconds, environment_of, pod_spec

# The worker image's ENTRYPOINT (Containerfile.worker): a service or a pod gives the rest of the list's command.
WORKER_ENTRYPOINT = ["latency-atlas", "worker"]
CENTRAL_IMAGE, WORKER_IMAGE = "latency-atlas", "latency-atlas-worker"
# Python's own, not a setting of ours: a unit's unbuffered log lines.
INTERPRETER_ENV = {"PYTHONUNBUFFERED"}
HEALTH_PORT = "LATENCY_HEALTH_PORT"
FILE = "_FILE"


def _entry(name: str) -> Setting | None:
    for entry in SETTINGS:
        if entry.name == name or (entry.prefix and name.startswith(entry.name)):
            return entry
    return None


def reads(process: Process) -> set[str]:
    """Every variable name the process may be given, prefix settings as their prefix."""
    names = {e.name for e in SETTINGS if process.reads in e.readers} | set(process.env)
    return names | {e.name + FILE for e in SETTINGS if process.reads in e.readers and e.secret}


def _read(process: Process, variable: str) -> bool:
    if variable in reads(process):
        return True
    bare = variable.removesuffix(FILE)
    entry = _entry(bare)
    if entry is None or process.reads not in entry.readers:
        return False
    return entry.prefix and (variable == bare or entry.secret)


def required(process: Process) -> set[str]:
    """As the deploy examples set them (probes/conf/render.py): a region worker needs its own, not the site's."""
    if process.reads == WORKER:
        return {e.name for e in SETTINGS if e.required and WORKER in e.readers and not set(e.readers) & set(CENTRAL)}
    return {e.name for e in SETTINGS if e.required and process.reads in e.readers}


def env_problems(where: str, process: Process, env: dict[str, str]) -> list[str]:
    problems = [
        f"{where} sets {name}, which {process.name} does not read" for name in sorted(env) if not _read(process, name)
    ]
    for name in sorted(required(process)):
        if name in env or name + FILE in env:
            continue
        if name == "LATENCY_REGION_KEY":
            regions = [r for r in env.get("LATENCY_REGION", "").split(",") if r]
            per_region = [key_variable(r) for r in regions]
            if regions and all(v in env or v + FILE in env for v in per_region):
                continue
        problems.append(f"{where} does not set {name}, which {process.name} requires")
    for name, value in sorted(env.items()):
        entry = _entry(name)
        if entry is None or not entry.secret or name.endswith(FILE):
            continue
        if "://" in value and urlsplit(value).password is None:
            continue  # a URL without a credential in it
        problems.append(f"{where} gives the secret {name} as a value: give it as a file ({name}{FILE})")
    return problems


# --- compose -----------------------------------------------------------------------------------------------------


def image_kind(image: str) -> str:
    """central, worker or demo, by the image's name (a registry path and a tag around it)."""
    name = image.rsplit("/", 1)[-1].split(":", 1)[0]
    return {CENTRAL_IMAGE: "central", WORKER_IMAGE: "worker", "latency-atlas-demo": "demo"}.get(name, "other")


def _depends(services: dict, name: str, on: str, seen: frozenset = frozenset()) -> bool:
    """Whether `name` starts only after `on` completed successfully (directly or through its dependencies)."""
    deps = services[name].get("depends_on") or {}
    if isinstance(deps, list):
        return False
    for dep, spec in deps.items():
        if dep in seen or dep not in services:
            continue
        if dep == on and spec.get("condition") == "service_completed_successfully":
            return True
        if spec.get("required", True) and _depends(services, dep, on, seen | {name}):
            return True
    return False


def compose_runs(doc: dict, procs: dict[str, Process]) -> dict[str, list[str]]:
    """{process: the services running it}."""
    found: dict[str, list[str]] = {name: [] for name in procs}
    for name, service in doc["services"].items():
        kind = image_kind(service.get("image", ""))
        command = service.get("command")
        if kind == "central" and "entrypoint" not in service and command and command[0] in procs:
            found[command[0]].append(name)
        if kind == "worker" and "entrypoint" not in service:
            for proc in procs.values():
                if proc.image == "worker" and WORKER_ENTRYPOINT + list(command or []) in proc.commands:
                    found[proc.name].append(name)
    return found


def compose_problems(doc: dict, procs: dict[str, Process]) -> list[str]:
    services = doc["services"]
    problems = []
    runs = compose_runs(doc, procs)
    once = [p for p in procs.values() if p.once]
    for proc in procs.values():
        if not runs[proc.name]:
            problems.append(f"no compose service runs {proc.name} ({proc.commands})")
    running = {name for names in runs.values() for name in names}
    for name, service in services.items():
        ours = image_kind(service.get("image", "")) in ("central", "worker")
        if ours and name not in running and "entrypoint" not in service:
            problems.append(f"compose service {name} runs {service.get('command')}: not in the list")
    for proc_name, names in runs.items():
        proc = procs[proc_name]
        for name in names:
            service = services[name]
            where = f"compose service {name}"
            if image_kind(service["image"]) != ("worker" if proc.image == "worker" else "central"):
                problems.append(f"{where} runs {proc.name} from {service['image']}, not the {proc.image} image")
            if proc.image == "central" and service["command"] != [proc.name]:
                problems.append(f"{where} passes {service['command']} to the entrypoint, not [{proc.name!r}]")
            env = environment_of(service)
            problems += env_problems(where, proc, env)
            if proc.once:
                if service.get("restart", "no") != "no":
                    problems.append(f"{where} runs once but restarts ({service.get('restart')})")
                continue
            grace = duration_seconds(service.get("stop_grace_period", "10s"))
            if proc.stop_seconds is not None and grace < proc.stop_seconds:
                problems.append(f"{where} gives SIGTERM {grace:g} s, less than {proc.name}'s {proc.stop_seconds} s")
            problems += _compose_health(where, proc, service, env)
            for first in once:
                if not any(_depends(services, name, s) for s in runs[first.name]):
                    problems.append(f"{where} does not wait for {first.name} to complete successfully")
    for name, service in services.items():
        if image_kind(service.get("image", "")) == "other" or name == "init-secrets":
            continue
        if service.get("read_only") is not True or "/tmp" not in (service.get("tmpfs") or []):
            problems.append(f"compose service {name} is not read-only with a tmpfs on /tmp")
        if service.get("cap_drop") != ["ALL"]:
            problems.append(f"compose service {name} keeps capabilities (cap_drop: [ALL])")
    return problems


def _compose_health(where: str, proc: Process, service: dict, env: dict[str, str]) -> list[str]:
    if proc.health is None:
        return []
    if proc.health == "web":
        port = str(proc.port)
        if env.get("UVICORN_PORT") != port:
            return [f"{where} does not listen on the list's port {port} (UVICORN_PORT={env.get('UVICORN_PORT')})"]
    else:
        port = env.get(proc.health, "")
        if not port:
            return [f"{where} does not set {proc.health}: {proc.name} answers no health check without it"]
    test = " ".join(service.get("healthcheck", {}).get("test", []))
    if f"http://127.0.0.1:{port}/readyz" not in test:
        return [f"{where}'s healthcheck does not ask /readyz on port {port}: {test!r}"]
    return []


# --- Kubernetes --------------------------------------------------------------------------------------------------


def _config_maps(resources: list[dict]) -> dict[str, dict]:
    return {r["metadata"]["name"]: r.get("data") or {} for r in resources if r["kind"] == "ConfigMap"}


def container_env(container: dict, resources: list[dict]) -> tuple[dict[str, str], list[str]]:
    """The variables a container is given (envFrom's ConfigMaps read), and the references that lead nowhere."""
    maps = _config_maps(resources)
    env: dict[str, str] = {}
    missing = []
    for source in container.get("envFrom", []):
        name = source.get("configMapRef", {}).get("name")
        if name is None:
            missing.append(f"envFrom {source}: only ConfigMaps are read by tests/deploy/drift.py")
        elif name not in maps:
            missing.append(f"envFrom names the ConfigMap {name}, which is not among the resources")
        else:
            env.update(maps[name])
    for item in container.get("env", []):
        ref = item.get("valueFrom", {}).get("configMapKeyRef")
        if ref is not None:
            if ref["key"] not in maps.get(ref["name"], {}) and not ref.get("optional"):
                missing.append(
                    f"{item['name']} is read from {ref['name']}/{ref['key']}, which is not among the resources"
                )
            env[item["name"]] = maps.get(ref["name"], {}).get(ref["key"], "")
        else:
            env[item["name"]] = str(item.get("value", ""))
    return env, missing


def _port(container: dict, port: int | str) -> int | None:
    if isinstance(port, int):
        return port
    return next((p["containerPort"] for p in container.get("ports", []) if p.get("name") == port), None)


def kubernetes_runs(resources: list[dict], procs: dict[str, Process]) -> list[tuple[Process, dict, dict]]:
    """(process, resource, container) for every main container running a process of the list."""
    found = []
    for resource in resources:
        for container in containers(resource, init=False):
            kind = image_kind(container["image"])
            args = container.get("args", [])
            for proc in procs.values():
                if "command" in container:
                    continue
                if kind == "central" == proc.image and args == [proc.name]:
                    found.append((proc, resource, container))
                if kind == "worker" == proc.image and WORKER_ENTRYPOINT + args in proc.commands:
                    found.append((proc, resource, container))
    return found


def kubernetes_problems(resources: list[dict], procs: dict[str, Process]) -> list[str]:
    problems = []
    runs = kubernetes_runs(resources, procs)
    for proc in procs.values():
        if not any(p is proc for p, _, _ in runs):
            problems.append(f"no Kubernetes workload runs {proc.name} ({proc.commands})")
    for proc, resource, container in runs:
        where = f"{resource['kind']} {resource['metadata']['name']}"
        env, missing = container_env(container, resources)
        problems += [f"{where}: {m}" for m in missing] + env_problems(where, proc, env)
        spec = pod_spec(resource)
        if proc.once:
            if resource["kind"] != "Job":
                problems.append(f"{where} runs {proc.name}, which runs once, not as a Job")
            continue
        if resource["kind"] != "Deployment":
            problems.append(f"{where} runs {proc.name}, a long-running process, not as a Deployment")
        grace = spec.get("terminationGracePeriodSeconds", 30)
        if proc.stop_seconds is not None and grace < proc.stop_seconds:
            problems.append(f"{where} gives SIGTERM {grace} s, less than {proc.name}'s {proc.stop_seconds} s")
        problems += _kubernetes_health(where, proc, container, env)
        if proc.image == "central" and any(p.once and p.image == "central" for p in procs.values()):
            waits = [c for c in spec.get("initContainers", []) if "migrate --check" in " ".join(c.get("command", []))]
            if not waits:
                problems.append(f"{where} has no init container waiting for the migrations of the migrate Job")
    running = {id(container) for _, _, container in runs}
    for resource in resources:
        spec = pod_spec(resource)
        if spec is None:
            continue
        where = f"{resource['kind']} {resource['metadata']['name']}"
        for container in containers(resource, init=False):
            if image_kind(container["image"]) in ("central", "worker") and id(container) not in running:
                problems.append(f"{where} runs {container.get('command')} {container.get('args')}: not in the list")
        problems += _hardening(where, spec)
    return problems


def _kubernetes_health(where: str, proc: Process, container: dict, env: dict[str, str]) -> list[str]:
    if proc.health is None:
        return []
    if proc.health == "web":
        port = proc.port
        if env.get("UVICORN_PORT") != str(port):
            return [f"{where} does not listen on the list's port {port} (UVICORN_PORT={env.get('UVICORN_PORT')})"]
    else:
        port = int(env.get(proc.health) or 0) or None
        if port is None:
            return [f"{where} does not set {proc.health}: {proc.name} answers no health check without it"]
    problems = []
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        get = container.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or _port(container, get.get("port", "")) != port:
            problems.append(f"{where}'s {probe} does not ask {path} on port {port}: {get}")
    return problems


def _hardening(where: str, spec: dict) -> list[str]:
    problems = []
    if spec.get("securityContext", {}).get("runAsNonRoot") is not True:
        problems.append(f"{where} may run as root (securityContext.runAsNonRoot)")
    tmp_volumes = {v["name"] for v in spec.get("volumes", []) if "emptyDir" in v}
    for container in [*spec.get("initContainers", []), *spec["containers"]]:
        name = f"{where} container {container['name']}"
        context = container.get("securityContext", {})
        if context.get("readOnlyRootFilesystem") is not True or context.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{name} has a writable root or may gain privileges")
        if context.get("capabilities", {}).get("drop") != ["ALL"]:
            problems.append(f"{name} keeps capabilities (drop: [ALL])")
        if not any(m["mountPath"] == "/tmp" and m["name"] in tmp_volumes for m in container.get("volumeMounts", [])):
            problems.append(f"{name} has no emptyDir on /tmp")
        requests = container.get("resources", {}).get("requests", {})
        if not re.fullmatch(r"\d+Mi", str(requests.get("memory", ""))) or not requests.get("cpu"):
            problems.append(f"{name} requests no memory in Mi or no CPU: {requests}")
    return problems


# --- systemd -----------------------------------------------------------------------------------------------------


def unit_problems(units: list, procs: dict[str, Process], venv_bin: str) -> list[str]:
    """`units`: tests.deploy.units.Unit, templates read with an instance."""
    problems = []

    def argv(line: str) -> list[str]:
        words = line.split()
        return [words[0].removeprefix(venv_bin), *words[1:]]

    by_commands = {}
    for unit in units:
        by_commands.setdefault(tuple(tuple(argv(line)) for line in unit.values("Service", "ExecStart")), unit)

    def unit_of(proc: Process):
        # systemd's set-up unit runs the `prepare` commands too (collectstatic once per install of the code).
        wanted = [*proc.commands, *proc.prepare] if proc.once else proc.commands
        return by_commands.get(tuple(map(tuple, wanted)))

    migrate_units = [unit.name for p in procs.values() if p.once and (unit := unit_of(p)) is not None]
    for proc in procs.values():
        unit = unit_of(proc)
        if unit is None:
            problems.append(f"no unit in deploy/ runs {proc.name}'s commands {proc.commands}")
            continue
        where = f"unit {unit.name}"
        own = {}
        for line in unit.values("Service", "Environment"):
            for word in line.split():
                key, _, value = word.partition("=")
                own[key] = value
        problems += [
            f"{where} sets {name}, which {proc.name} does not read"
            for name in sorted(own)
            if name not in INTERPRETER_ENV and not _read(proc, name)
        ]
        if proc.once:
            if not unit.oneshot:
                problems.append(f"{where} runs {proc.name}, which runs once, but is not Type=oneshot")
            continue
        stop = unit.value("Service", "TimeoutStopSec")
        if proc.stop_seconds is not None and (stop is None or int(stop) < proc.stop_seconds):
            problems.append(f"{where} gives SIGTERM {stop} s, less than {proc.name}'s {proc.stop_seconds} s")
        if proc.health == "web" and own.get("UVICORN_PORT") != str(proc.port):
            problems.append(f"{where} does not listen on the list's port {proc.port}")
        if proc.image == "worker" and unit.instance and own.get("LATENCY_REGION") != unit.instance:
            problems.append(f"{where} does not take its region from its instance name (LATENCY_REGION=%i)")
        if proc.image == "central":
            after = " ".join(unit.values("Unit", "After")).split()
            problems += [f"{where} does not start after {m}" for m in migrate_units if m not in after]
    return problems
