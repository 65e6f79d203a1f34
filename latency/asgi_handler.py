"""Django's ASGI handler, with the middleware and views run synchronously, on the request's one thread.

Django's own builds the chain for async: each middleware that can do both runs in async mode, and MiddlewareMixin
in async mode hands every process_request and process_response to a thread (sync_to_async), while the views here
are synchronous. So a request went back and forth between the event loop and its thread about twenty times, which
cost more than rendering a cached status page (issue 49). This one builds the chain as WSGI does and hands it to
the request's thread once. The few async views (the streamed exports) are awaited from that thread on the event
loop (async_to_sync), as under WSGI; the request's start, end and response stay with Django's ASGI handler."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler


class SynchronousChainASGIHandler(ASGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        # Thread-sensitive: in the request's own thread (ASGIHandler gives each request one), where its database
        # connections live.
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)
