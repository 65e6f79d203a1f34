"""The central image, on a database server with no database of its name yet: `migrate` (the entrypoint running
deploy/processes.toml's commands in order) creates and migrates it and exits 0; then `web` from the same image,
read-only root and all, answers /readyz 200 on the port UVICORN_PORT gives it, serves a page whose static files
were collected at build time, and leaves on SIGTERM."""

from __future__ import annotations

import http.client
import re
import uuid

import pytest

from devtools.embedded import free_port
from tests.images.containers import new_secret_key, readyz, secret_file, stop
from tests.support import wait_for

pytestmark = pytest.mark.timeout(900)
SITE = "atlas.example.org"


def get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers={"Host": SITE, "X-Forwarded-Proto": "https"})
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, body


def running(proc) -> bool:
    assert proc.popen.poll() is None, f"{proc.args} exited with {proc.popen.returncode}:\n{proc.log()}"
    return True


def test_the_central_image_migrates_a_new_database_and_serves_readyz(built_images, containers, services, tmp_path):
    name = f"latency_images_{uuid.uuid4().hex[:12]}"
    port = free_port()
    env = {
        "LATENCY_PRODUCTION": "true",
        "ALLOWED_HOSTS": SITE,
        "LATENCY_TRUSTED_PROXIES": "127.0.0.1",
        "DATABASE_URL": services.database_url(name),
        "REDIS_URL": services.redis_url,
        "LATENCY_CHANNEL_PREFIX": f"latency-test-images-{name}",
        "SECRET_KEY_FILE": "/run/secrets/secret-key",
        "UVICORN_PORT": str(port),
    }
    files = {"/run/secrets/secret-key": secret_file(tmp_path, "secret-key", new_secret_key())}
    central = containers(built_images.central, env, files)
    entrypoint = built_images.entrypoint(built_images.central)
    try:
        migrate = central.run([*entrypoint, "migrate"], timeout=600)
        output = migrate.stdout + migrate.stderr
        assert migrate.returncode == 0, output[-4000:]
        assert "created" in output.lower(), output[-4000:]
        assert re.search(r"Applying probes\.0001_\w+\.\.\. OK", output), output[-4000:]

        web = central.start("web", [*entrypoint, "web"])
        ready = wait_for(lambda: running(web) and readyz(port), 120, message="the web's /readyz")
        assert ready[0] == 200, ready
        # Production settings serve static files from the manifest collectstatic wrote at build time: a page that
        # names one renders, and the hashed file it names is served.
        status, page = get(port, "/accounts/login/")
        assert status == 200, page[:500]
        assets = re.findall(rb'href="(/static/[^"]+\.[0-9a-f]{12}\.css)"', page)
        assert assets, page[:2000]
        assert get(port, assets[0].decode())[0] == 200
        # uvicorn re-raises the SIGTERM once it has shut down, so its log says whether the stop was clean.
        stop(web)
        assert "Finished server process" in web.log(), web.log()
    finally:
        with services.maintenance() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
