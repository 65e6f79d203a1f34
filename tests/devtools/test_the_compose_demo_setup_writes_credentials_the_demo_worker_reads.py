"""`python -m devtools.demo_setup` (the compose file's demo-setup) refuses a site that does not say its geography
is emulated, naming the command that says so; and it writes each demo region's credential to a file named by the
region's slug, which a region worker given LATENCY_REGION_KEY_<SLUG>_FILE (as the compose file's demo-worker is)
takes, and which a second run keeps."""

from __future__ import annotations

import argparse

import pytest

from devtools.demo_setup import SetupError, region_keys, run
from probes.models import RegionKey
from probes.worker.config import key_variable, load
from tests.devtools.demo_regions import demo_regions


def test_demo_setup_refuses_a_site_without_emulated_geography(db, settings, tmp_path):
    settings.LATENCY_EMULATED_GEOGRAPHY = False
    with pytest.raises(SetupError, match="LATENCY_EMULATED_GEOGRAPHY=true docker compose --profile demo up"):
        run(argparse.Namespace(mock_url="http://mockllm:8300", keys=tmp_path))
    assert not RegionKey.objects.exists()


def test_demo_setup_refuses_a_keys_folder_that_is_not_there(db, settings, tmp_path):
    settings.LATENCY_EMULATED_GEOGRAPHY = True
    with pytest.raises(SetupError, match="no such folder"):
        run(argparse.Namespace(mock_url="http://mockllm:8300", keys=tmp_path / "absent"))


def test_each_demo_regions_credential_file_is_taken_by_a_worker_and_kept_by_a_second_run(db, tmp_path):
    regions = demo_regions(["eu-london", "ap-singapore"])
    region_keys(regions, tmp_path)
    files = {path.name: path.read_text() for path in tmp_path.iterdir()}
    assert sorted(files) == ["ap-singapore", "eu-london"]
    env = {
        "LATENCY_BROKER_URL": "redis://redis:6379/0",
        "LATENCY_REGION": "eu-london,ap-singapore",
        **{key_variable(slug) + "_FILE": str(tmp_path / slug) for slug in files},
    }
    config = load(env=env)
    assert {slug: c.key_id for slug, c in config.credentials.items()} == {
        region.slug: RegionKey.objects.get(region=region).key_id for region in regions
    }
    region_keys(regions, tmp_path)
    assert {path.name: path.read_text() for path in tmp_path.iterdir()} == files
    assert RegionKey.objects.count() == 2
