"""Every environment variable the code reads is in the one list of settings (probes/conf/catalog.py), and
every variable in the list is read somewhere: found in the source by name, and seen read while the settings
module and a region worker's configuration load."""

from __future__ import annotations

import os
import runpy

from probes.conf.catalog import RETIRED, SETTINGS, declared
from probes.worker import config as worker_config
from probes.worker.protocol import Credential
from tests.settings_catalog.source_scan import every_read, prefixes_joined
from tests.support import ROOT


class Recording(dict):
    """An environment that notes every name asked of it."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.asked: set[str] = set()

    def get(self, key, default=None):
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key) -> bool:
        self.asked.add(key)
        return super().__contains__(key)


def test_every_variable_the_source_reads_by_name_is_in_the_list():
    reads = every_read()
    # The scan finds what it is meant to: most of the list is read by a name in the source.
    assert len(reads) >= 50, sorted(reads)
    undeclared = {name: places for name, places in reads.items() if not declared(name)}
    assert undeclared == {}, "add these to probes/conf/catalog.py, then run `make settings-docs`"


def test_every_variable_in_the_list_is_read_by_the_code():
    reads, joined = every_read(), prefixes_joined()
    unread = [entry.name for entry in SETTINGS if entry.name not in (joined if entry.prefix else reads)]
    assert unread == [], "the list declares variables no code reads: remove them or read them"


def test_loading_the_settings_asks_only_for_listed_variables(monkeypatch):
    environ = Recording(os.environ)
    monkeypatch.setattr(os, "environ", environ)
    runpy.run_path(str(ROOT / "latency" / "settings.py"))
    assert environ.asked, "the settings read nothing through os.environ"
    assert sorted(name for name in environ.asked if not declared(name)) == []
    assert set(RETIRED) <= environ.asked


def test_loading_a_region_workers_configuration_asks_only_for_listed_variables():
    central, _ = Credential.new()
    _, credential = Credential.new((central.public(),))
    env = Recording(LATENCY_BROKER_URL="rediss://broker.example.org:6380/0", LATENCY_REGION_KEY=credential)
    loaded = worker_config.load(region="af-lagos", env=env)
    assert loaded.regions == ("af-lagos",)
    assert "LATENCY_HEARTBEAT_SECONDS" in env.asked
    assert sorted(name for name in env.asked if not declared(name)) == []
