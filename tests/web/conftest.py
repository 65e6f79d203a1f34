"""Fixtures of the dashboard's live-feed (websocket) tests."""

from __future__ import annotations

import uuid

import pytest
import redis
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from django.db import connections
from django.test import Client

from latency.env import channel_layer


@pytest.fixture
async def redis_channel_layer(settings, test_redis_url):
    """The real Redis channel layer, under a prefix of this test's own
    (modules opt in: pytestmark = pytest.mark.usefixtures(...))."""
    # A prefix of its own per test: nothing another test (or another
    # engineer's run on the same Redis) sends can reach these sockets.
    prefix = f"latency-ws-test-{uuid.uuid4().hex[:10]}"
    settings.CHANNEL_LAYERS = {"default": channel_layer(test_redis_url, prefix)}
    channel_layers.backends = {}
    yield
    channel_layers.backends = {}
    # Group memberships would linger in Redis for a day. Deleted with a plain
    # client: the layer's own flush() also closes the pools of every event
    # loop it has seen, and broadcast() ran its send on a loop that is gone.
    client = redis.Redis.from_url(test_redis_url)
    keys = list(client.scan_iter(match=f"{prefix}*"))
    if keys:
        client.delete(*keys)
    client.close()
    # Session lookups ran in asgiref's worker thread, whose persistent
    # connection (CONN_MAX_AGE) would keep the test database from being dropped.
    await sync_to_async(connections.close_all)()


@pytest.fixture
def session_cookie(django_user_model):
    user = django_user_model.objects.create_user(username="watcher", password="not-used-here-4821")
    client = Client()
    client.force_login(user)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


@pytest.fixture
def viewer(client, django_user_model):
    """A signed-in user without special permissions, on the test's `client`."""
    user = django_user_model.objects.create_user(username="viewer", password="a-long-test-password-9931")
    client.force_login(user)
    return user
