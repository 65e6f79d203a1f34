"""A read's arrival stamp never goes back: not before the previous read of the call, not before the call started.
A kernel stamp is carried over from the realtime clock, which can step between two reads; a milestone read
from such a stamp must not come before the one it followed (a negative total on a busy machine)."""

import asyncio

from probes.engine import clock
from probes.engine.clock import TimedStream, Timeline


class Stamped:
    """An in-memory stream whose reads carry the given arrival stamps, as netstream's streams report them."""

    def __init__(self, reads: list[tuple[bytes, int]]) -> None:
        self._reads = list(reads)
        self.last_stamp_ns = 0

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data, self.last_stamp_ns = self._reads.pop(0)
        return data


def test_a_read_stamped_before_the_last_one_or_the_call_keeps_the_order() -> None:
    async def run() -> list[int | None]:
        tl = Timeline(start_ns=1_000)
        token = clock.current.set(tl)
        try:
            stream = TimedStream(Stamped([(b"HTTP/1.1 200", 900), (b"headers", 5_000), (b"body", 4_500), (b"", 9)]))
            seen = []
            for _ in range(4):
                await stream.read(100)
                seen.append(tl.last_read)
            return seen
        finally:
            clock.current.reset(token)

    # Before the call: the call's start; before the previous read: the previous read's; an empty read: unchanged.
    assert asyncio.run(run()) == [1_000, 5_000, 5_000, 5_000]
