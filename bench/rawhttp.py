"""A lean HTTP/1.1 client for load benches: GET over keep-alive connections with asyncio streams, nothing else.

The benches share this machine's CPUs with the server they measure, so the client's own cost is taken from the
server: httpx's AsyncClient spent more CPU per request than a cached status page costs uvicorn, and fell behind
its own schedule long before the server did. This one only writes a request line and reads a status line,
headers and a Content-Length or chunked body, about a tenth of that."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, origin: str) -> Connection:
        parts = urlsplit(origin)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        return cls(reader, writer, parts.netloc)

    async def get(self, path: str) -> tuple[int, bytes]:
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        if "content-length" in headers:
            return status, await self.reader.readexactly(int(headers["content-length"]))
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = bytearray()
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                body += await self.reader.readexactly(size + 2)
                if size == 0:
                    return status, bytes(body[:-2])
                del body[-2:]
        raise ValueError(f"{path}: an answer with neither Content-Length nor chunked body")

    def close(self) -> None:
        self.writer.close()


class Pool:
    """Up to `size` keep-alive connections to one origin, each carrying one request at a time."""

    def __init__(self, origin: str, size: int) -> None:
        self.origin = origin
        self.idle: list[Connection] = []
        self.slots = asyncio.Semaphore(size)

    async def get(self, path: str) -> tuple[int, bytes]:
        async with self.slots:
            reused = bool(self.idle)
            connection = self.idle.pop() if reused else await Connection.open(self.origin)
            try:
                answer = await connection.get(path)
            except (asyncio.IncompleteReadError, ConnectionError):
                connection.close()
                if not reused:
                    raise
                # The server closed an idle keep-alive connection (uvicorn's --timeout-keep-alive) as it was
                # reused: once more on a new one, as browsers and httpx do.
                connection = await Connection.open(self.origin)
                answer = await connection.get(path)
            self.idle.append(connection)
            return answer

    def close(self) -> None:
        for connection in self.idle:
            connection.close()
