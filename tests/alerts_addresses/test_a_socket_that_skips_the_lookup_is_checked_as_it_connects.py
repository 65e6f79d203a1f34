"""The last check sits in the socket itself: inside a send, a socket that connects (or sends a datagram)
straight to an internal address, with no lookup on the way, is refused before a packet leaves, as is a
local socket; the same sockets outside a send, in this process's other work (Redis, PostgreSQL, the
receivers), are left alone."""

from __future__ import annotations

import socket

import pytest

from probes.alerts.addresses import Refused, guarded


def test_a_direct_connect_to_loopback_inside_a_send_is_refused(db, json_receiver):
    with guarded() as guard:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(Refused):
            sock.connect(("127.0.0.1", json_receiver.port))
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(Refused):
            sock.connect_ex(("127.0.0.1", json_receiver.port))
    assert guard.refused == "loopback"
    assert json_receiver.posts == []


def test_a_datagram_to_a_link_local_address_inside_a_send_is_refused(db):
    with guarded() as guard, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock, pytest.raises(Refused):
        sock.sendto(b"<14>atlas", ("169.254.169.254", 514))
    assert guard.refused == "link-local"


def test_a_local_socket_inside_a_send_is_refused(db, tmp_path):
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(1)
        with guarded() as guard, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock, pytest.raises(Refused):
            sock.connect(str(path))
    assert guard.refused == "local-socket"


def test_sockets_outside_a_send_are_left_alone(db, json_receiver):
    with guarded():
        pass
    # After a send (the hooks stay installed), this process connects to loopback as before.
    with socket.create_connection(("127.0.0.1", json_receiver.port), timeout=10) as sock:
        assert sock.getpeername()[0] == "127.0.0.1"
