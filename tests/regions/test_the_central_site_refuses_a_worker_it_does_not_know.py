"""The worker's first heartbeat is answered by the central site (the ingest
worker): an unknown region, another region's credential or a retired one is
refused there, and the worker prints the reason in one line and exits 78."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from probes.fleet import central
from probes.fleet.keys import issue_key
from tests.regions.conftest import one_line


def refusal(region_host, region: str, key: str) -> str:
    done = region_host.run("worker", "--region", region, "--hello-timeout", "60", LATENCY_REGION_KEY=key)
    assert done.returncode == 78, done.stdout + done.stderr
    line = one_line(done.stdout + done.stderr)
    assert line.startswith("latency-atlas: refusing to start: the central site refuses region ")
    assert key not in line and key[4:12] not in line
    return line


def test_an_unknown_region_another_regions_credential_and_a_retired_one_are_refused(region_host, make_region):
    lagos, oslo = make_region(slug="test-cli-lagos"), make_region(slug="test-cli-oslo")
    lagos_key = issue_key(lagos).credential
    old_oslo_key = issue_key(oslo).credential
    issue_key(oslo, overlap=timedelta(0))  # rotated: the old key ends now
    region_host.ingest()

    # Three workers of their own, started side by side (each takes seconds to start and be answered).
    with ThreadPoolExecutor() as pool:
        nowhere = pool.submit(refusal, region_host, "test-cli-nowhere", lagos_key)
        foreign = pool.submit(refusal, region_host, "test-cli-oslo", lagos_key)
        retired = pool.submit(refusal, region_host, "test-cli-oslo", old_oslo_key)

    assert "region test-cli-nowhere does not exist on this site" in nowhere.result()
    assert "belongs to region test-cli-lagos, not to test-cli-oslo" in foreign.result()
    line = retired.result()
    assert "retired" in line and "test-cli-oslo" in line


def test_a_credential_the_site_never_issued_is_refused(region_host, make_region):
    make_region(slug="test-cli-lagos")
    region_host.ingest()
    from probes.worker.protocol import Credential

    # A key of its own, with the site's central key beside it (that one is public).
    _, stranger = Credential.new(central.public_keys())
    line = refusal(region_host, "test-cli-lagos", stranger)
    assert "is not a credential of this site" in line


def test_each_refused_worker_is_kept_as_one_dead_letter_not_one_per_beat(region_host, make_region):
    from probes.models import DeadLetter

    make_region(slug="test-cli-lagos")
    region_host.ingest()
    from probes.worker.protocol import Credential

    # A key of its own, with the site's central key beside it (that one is public).
    _, stranger = Credential.new(central.public_keys())
    refusal(region_host, "test-cli-lagos", stranger)
    refusal(region_host, "test-cli-lagos", stranger)
    letters = list(DeadLetter.objects.filter(reason__startswith="heartbeat refused"))
    # Two processes (two instances), one letter each.
    assert len(letters) == 2, [x.reason for x in letters]
    assert all(stranger not in (x.payload_text + str(x.payload)) for x in letters)
