"""A DNS server on loopback whose answers the test sets, over a real UDP socket, in a thread of the test
process: what LATENCY_NOTIFY_DNS_SERVERS points at when a test needs a name to resolve to one address now
and to another later (DNS rebinding), without the network or /etc/hosts.

    with DnsServer() as dns:
        settings.LATENCY_NOTIFY_DNS_SERVERS = [dns.address]
        dns.answer("hooks.example.net", "93.184.216.34")   # A records, TTL 0
        dns.answer("hooks.example.net", "127.0.0.1")       # from the next query on
        dns.queries                                        # [("hooks.example.net", "A"), ...]

A name with no answer set is NXDOMAIN; a question of another type has an empty answer. Wire format by
dnspython. Development tooling, never imported by the app packages (devtools/__init__.py).
"""

from __future__ import annotations

import ipaddress
import socketserver
import threading

import dns.exception
import dns.message
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset

LOOPBACK = "127.0.0.1"


class _Server(socketserver.ThreadingUDPServer):
    daemon_threads = True
    owner: DnsServer


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        data, sock = self.request
        try:
            query = dns.message.from_wire(data)
        except dns.exception.DNSException:
            return
        reply = self.server.owner._reply(query)
        sock.sendto(reply.to_wire(), self.client_address)


class DnsServer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: dict[str, list[str]] = {}
        self._queries: list[tuple[str, str]] = []
        self._server = _Server((LOOPBACK, 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="dns-server"
        )
        self._thread.start()

    @property
    def address(self) -> tuple[str, int]:
        return (LOOPBACK, int(self._server.server_address[1]))

    def answer(self, name: str, *addresses: str) -> None:
        """From the next query on, `name` resolves to these addresses (A or AAAA by their kind)."""
        with self._lock:
            self._answers[name.rstrip(".").lower()] = list(addresses)

    @property
    def queries(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self._queries)

    def _reply(self, query: dns.message.Message) -> dns.message.Message:
        reply = dns.message.make_response(query)
        for question in query.question:
            name = question.name.to_text().rstrip(".").lower()
            kind = dns.rdatatype.to_text(question.rdtype)
            with self._lock:
                self._queries.append((name, kind))
                addresses = self._answers.get(name)
            if addresses is None:
                reply.set_rcode(dns.rcode.NXDOMAIN)
                continue
            version = 4 if kind == "A" else 6
            matching = [a for a in addresses if ipaddress.ip_address(a).version == version]
            if matching and kind in ("A", "AAAA"):
                reply.answer.append(dns.rrset.from_text_list(question.name, 0, dns.rdataclass.IN, kind, matching))
        return reply

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> DnsServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
