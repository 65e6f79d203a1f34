"""The demo's mock LLM server keeps its port from run to run of one state folder, so a target added by hand
for it still works after a restart; when the port is taken, a new one is chosen, remembered and reported."""

from __future__ import annotations

import socket

from devtools import demo, embedded


def test_the_first_run_chooses_a_free_port_and_remembers_it(tmp_path):
    port, replaced = demo.mock_port(tmp_path)
    assert replaced is None
    assert (tmp_path / demo.MOCK_PORT_FILE).read_text().strip() == str(port)
    assert not embedded.port_in_use(demo.MOCK_HOST, port)


def test_later_runs_of_the_same_folder_use_the_same_port(tmp_path):
    first, _ = demo.mock_port(tmp_path)
    assert demo.mock_port(tmp_path) == (first, None)
    assert demo.mock_port(tmp_path) == (first, None)


def test_another_folder_has_its_own_port(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, _ = demo.mock_port(tmp_path / "a")
    with socket.socket() as busy:  # the first demo's mock is running
        busy.bind((demo.MOCK_HOST, first))
        busy.listen(1)
        second, _ = demo.mock_port(tmp_path / "b")
    assert second != first


def test_a_taken_port_is_replaced_remembered_and_reported(tmp_path):
    first, _ = demo.mock_port(tmp_path)
    with socket.socket() as busy:
        busy.bind((demo.MOCK_HOST, first))
        busy.listen(1)
        port, replaced = demo.mock_port(tmp_path)
    assert replaced == first and port != first
    assert (tmp_path / demo.MOCK_PORT_FILE).read_text().strip() == str(port)
    assert demo.mock_port(tmp_path) == (port, None)


def test_an_unreadable_memory_is_a_first_run(tmp_path):
    (tmp_path / demo.MOCK_PORT_FILE).write_text("not a port\n")
    port, replaced = demo.mock_port(tmp_path)
    assert replaced is None and 1 <= port <= 65535
