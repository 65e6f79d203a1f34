"""A target's CA bundle is read only from inside the worker's LATENCY_CA_DIR. A path outside it (absolute, going
up, a link leading out), a missing file, a directory and a file that is not PEM give one and the same
config_error, so a target cannot learn which files exist on the worker; a worker without the setting allows no
bundle; a bundle inside the directory is trusted, on the region worker's long-lived engine too."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from probes.engine import Engine, ProbeSpec, WorkerEnv

PATH = "/v1/chat/completions"
UNUSABLE = "ca_bundle: not a readable PEM CA bundle inside this worker's LATENCY_CA_DIR"


@pytest.fixture
def ca_dir(tmp_path, mockllm_tls):
    """A worker's directory holding the mock server's CA, a file that is not PEM and a subdirectory; beside it,
    outside, a good CA bundle and a link to it from inside."""
    inside = tmp_path / "cas"
    (inside / "sub").mkdir(parents=True)
    shutil.copyfile(mockllm_tls.ca_pem_path, inside / "mock-ca.pem")
    shutil.copyfile(mockllm_tls.ca_pem_path, inside / "sub" / "mock-ca.pem")
    (inside / "not-pem.pem").write_text("this is not a certificate\n")
    shutil.copyfile(mockllm_tls.ca_pem_path, tmp_path / "outside.pem")
    (inside / "escape.pem").symlink_to(tmp_path / "outside.pem")
    return inside


def run(worker_env: WorkerEnv, spec: ProbeSpec):
    async def go():
        engine = Engine(worker_env)
        try:
            return await engine.measure(spec)
        finally:
            await engine.aclose()

    return asyncio.run(go())


def spec_for(server, ca_bundle: str) -> ProbeSpec:
    return ProbeSpec(url=server.base_url + PATH, model="mock-model", timeout_s=10.0, ca_bundle=ca_bundle)


def test_every_unusable_bundle_gives_the_same_text(mockllm_tls, ca_dir, tmp_path):
    worker_env = WorkerEnv.from_env({"LATENCY_CA_DIR": str(ca_dir)})
    names = [
        str(tmp_path / "outside.pem"),  # a real CA bundle, outside
        mockllm_tls.ca_pem_path,  # the session's, outside this worker's directory
        "../outside.pem",
        "escape.pem",
        "missing.pem",
        "not-pem.pem",
        "sub",
    ]
    errors = {name: run(worker_env, spec_for(mockllm_tls, name)) for name in names}
    assert {(m.outcome, m.error) for m in errors.values()} == {("config_error", UNUSABLE)}, errors


@pytest.mark.parametrize("name", ["mock-ca.pem", "sub/mock-ca.pem", "ABSOLUTE"])
def test_a_bundle_inside_the_directory_is_trusted(mockllm_tls, ca_dir, name):
    worker_env = WorkerEnv.from_env({"LATENCY_CA_DIR": str(ca_dir)})
    # An absolute path inside the directory (a row saved before names were required) works too.
    ca_bundle = str(ca_dir / "mock-ca.pem") if name == "ABSOLUTE" else name
    m = run(worker_env, spec_for(mockllm_tls, ca_bundle))
    assert m.outcome == "ok", m.error
    assert m.tls_ms is not None


def test_without_a_directory_no_bundle_is_allowed(mockllm_tls):
    m = run(WorkerEnv.from_env({}), spec_for(mockllm_tls, mockllm_tls.ca_pem_path))
    assert (m.outcome, m.error) == (
        "config_error",
        "ca_bundle: this worker allows no CA bundle (its operator sets LATENCY_CA_DIR to the directory of its bundles)",
    )


def test_the_region_workers_engine_uses_the_directory_it_was_given(mockllm_tls, ca_dir, monkeypatch):
    from probes import runtime

    monkeypatch.setattr(runtime, "_engine", None)  # this process's engine comes back after the test
    runtime.install_engine(WorkerEnv.from_env({"LATENCY_CA_DIR": str(ca_dir)}))
    assert runtime.run_probe(spec_for(mockllm_tls, "mock-ca.pem")).outcome == "ok"
    assert runtime.run_probe(spec_for(mockllm_tls, mockllm_tls.ca_pem_path)).error == UNUSABLE


@pytest.mark.parametrize(
    "value, words", [("relative/cas", "not an absolute path"), ("/nonexistent/cas", "not a directory")]
)
def test_a_bad_directory_is_refused_naming_the_setting(value, words):
    with pytest.raises(ValueError) as info:
        WorkerEnv.from_env({"LATENCY_CA_DIR": value})
    assert str(info.value).startswith("LATENCY_CA_DIR=") and words in str(info.value)
