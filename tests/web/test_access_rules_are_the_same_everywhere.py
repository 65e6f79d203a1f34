"""Each reading rule of latency.access holds identically at every door:
pages, the JSON API, the CSV exports and the live websocket, for each kind
of visitor, in private and in public mode. Each door refuses in its own
idiom (login redirect, JSON 403, plain 403, close code) but for the same
visitors."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import AsyncClient

from latency.consumers import CLOSE_LOGIN_REQUIRED
from tests.export_support import close_async_thread_connections  # noqa: F401  (autouse)
from tests.web.test_consumer_websocket import SAME_ORIGIN, TIMEOUT, Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("redis_channel_layer")]

LOGIN = "login"  # redirected to the login form
OPEN = "open"
JSON_403 = "json 403"
FORBIDDEN = "403"
CLOSED = "closed"  # the socket refused with CLOSE_LOGIN_REQUIRED

# (visitor, public mode) -> what each door answers.
RULES = {
    ("anonymous", False): {"page": LOGIN, "api": JSON_403, "export": LOGIN, "websocket": CLOSED},
    ("anonymous", True): {"page": OPEN, "api": OPEN, "export": LOGIN, "websocket": OPEN},
    ("signed in", False): {"page": OPEN, "api": OPEN, "export": FORBIDDEN, "websocket": OPEN},
    ("signed in", True): {"page": OPEN, "api": OPEN, "export": FORBIDDEN, "websocket": OPEN},
    ("may view measurements", False): {"page": OPEN, "api": OPEN, "export": OPEN, "websocket": OPEN},
    ("may view measurements", True): {"page": OPEN, "api": OPEN, "export": OPEN, "websocket": OPEN},
}
PAGES = ("/", "/regions/access-region/", "/targets/{target}/", "/where/?share-access-region=1")
API = ("/api/meta", "/api/overview", "/api/table", "/api/real-users", "/api/workloads?target={target}")
EXPORTS = (
    "/export/measurements.csv",
    "/export/regions.csv",
    "/export/real-users.csv",
    "/export/workloads.csv?target={target}",
)
CASES = [(visitor, public, door) for (visitor, public), doors in RULES.items() for door in doors]


@pytest.fixture
def world(make_region, make_target, make_probe):
    region = make_region(slug="access-region")
    return make_probe(target=make_target(name="Access target"), regions=[region]).target


@pytest.fixture
def clients(django_user_model) -> dict[str, AsyncClient]:
    """One client per kind of visitor (made here: the tests run in the event loop)."""
    made = {"anonymous": AsyncClient()}
    for n, visitor in enumerate(("signed in", "may view measurements")):
        user = django_user_model.objects.create_user(username=f"access-visitor-{n}", password="unused-password-3351")
        if visitor == "may view measurements":
            user.user_permissions.add(
                Permission.objects.get(codename="view_measurement", content_type__app_label="probes")
            )
        made[visitor] = AsyncClient()
        made[visitor].force_login(user)
    return made


async def http_answer(client: AsyncClient, url: str) -> str:
    response = await client.get(url)
    if response.status_code == 302:
        assert response["Location"].startswith("/accounts/login/?next="), response["Location"]
        return LOGIN
    if response.status_code == 403:
        if response["Content-Type"] == "application/json":
            assert response.json() == {"error": "login required"}
            return JSON_403
        return FORBIDDEN
    assert response.status_code == 200, (url, response.status_code)
    if response.streaming:
        b"".join([chunk async for chunk in response.streaming_content])
    return OPEN


async def socket_answer(client: AsyncClient) -> str:
    headers = [SAME_ORIGIN]
    if "sessionid" in client.cookies:
        headers.append((b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()))
    ws = Socket("/ws/measurements/", headers)
    accepted, code = await ws.connect(timeout=TIMEOUT)
    if accepted:
        await ws.disconnect()
        return OPEN
    assert code == CLOSE_LOGIN_REQUIRED
    return CLOSED


@pytest.mark.parametrize(
    ("visitor", "public", "door"), CASES, ids=[f"{v}-{'public' if p else 'private'}-{d}" for v, p, d in CASES]
)
async def test_every_door_answers_each_visitor_by_the_same_rule(settings, world, clients, visitor, public, door):
    settings.LATENCY_PUBLIC_DASHBOARD = public
    client = clients[visitor]
    expected = RULES[(visitor, public)][door]
    if door == "websocket":
        assert await socket_answer(client) == expected
        return
    urls = {"page": PAGES, "api": API, "export": EXPORTS}[door]
    for url in urls:
        assert await http_answer(client, url.format(target=world.id)) == expected, url
