"""The status cache's client is one per process (probes.compat.django.SharedPoolRedisCache): under ASGI each
request is a context of its own, with its own cache backend object, and each used to open a connection to Redis
of its own. Ten requests through the site's ASGI application, each in its own thread, open at most one."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from redis.connection import AbstractConnection

from probes.statuspages import cache as status_cache
from tests.factories import StatusPageFactory, TargetFactory
from tests.web.test_under_asgi_the_middleware_runs_synchronously_on_the_requests_thread import get

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def page(settings):
    settings.LATENCY_STATUS_CACHE_S = 30
    page = StatusPageFactory(slug=f"pooled-{uuid.uuid4().hex[:12]}", targets=[TargetFactory()])
    yield page
    status_cache.forget(page.slug)


def test_ten_requests_open_at_most_one_connection(page, monkeypatch):
    connects = []
    connect = AbstractConnection.connect

    def counted(self, *args, **kwargs):
        # Called before every command; it connects only a connection without a socket.
        if self._sock is None:
            connects.append(self)
        return connect(self, *args, **kwargs)

    monkeypatch.setattr(AbstractConnection, "connect", counted)

    async def ten() -> list[int]:
        return [(await get(f"/status/{page.slug}/"))[0] for _ in range(10)]

    assert asyncio.run(ten()) == [200] * 10
    assert len(connects) <= 1
    # Served from the cache, which is in Redis.
    assert status_cache._cache().get(status_cache.page_key(page.slug)) is not None
