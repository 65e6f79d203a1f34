"""Under ASGI the middleware chain is built as under WSGI (latency.asgi_handler): every middleware, from the
outermost to the innermost, is given a synchronous next step, so a request is handed to its thread once rather than
at each middleware. Django's own ASGI handler, the control, gives the innermost an async one. Through the site's
ASGI application, a synchronous page and an async view (an export's sign-in check) both still answer."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from asgiref.testing import ApplicationCommunicator
from django.core.handlers.asgi import ASGIHandler

from latency.asgi_handler import SynchronousChainASGIHandler

built: list[bool] = []


class Recorder:
    """Records whether the handler gave it an async next step."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        built.append(self.is_async)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request):
        return self.get_response(request)


RECORDER = f"{__name__}.Recorder"


@pytest.fixture
def recorded(settings):
    settings.MIDDLEWARE = [RECORDER, *settings.MIDDLEWARE, RECORDER]
    built.clear()
    return built


def test_every_middleware_is_given_a_synchronous_next_step(recorded):
    SynchronousChainASGIHandler()
    assert recorded == [False, False]  # innermost first


def test_djangos_own_handler_would_give_the_innermost_an_async_one(recorded):
    ASGIHandler()
    assert recorded[0] is True


async def get(path: str) -> tuple[int, dict[bytes, bytes]]:
    from latency.asgi import application

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
    }
    communicator = ApplicationCommunicator(application, scope)
    await communicator.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await communicator.receive_output(timeout=30)
    while True:  # the body, to its end
        message = await communicator.receive_output(timeout=30)
        if not message.get("more_body"):
            break
    await communicator.wait(timeout=30)
    return start["status"], dict(start["headers"])


@pytest.mark.django_db(transaction=True)
def test_a_page_and_an_async_view_answer_through_the_sites_asgi_application():
    status, _headers = asyncio.run(get("/accounts/login/"))
    assert status == 200
    status, headers = asyncio.run(get("/export/regions.csv"))
    assert status == 302
    assert headers[b"Location"].startswith(b"/accounts/login/")
