"""Database connections of the web process's pool handed back before a long response streams.

With the pool (latency.startup.use_pool) a request's connection goes back to it when the request ends, and a
streamed response (a CSV export: minutes) ends with its last byte: each download held a pooled connection for
as long as it ran, and as many downloads as the pool holds kept every other request waiting for one. A stream
reads on a connection of its own (probes.exports.pgcopy), so the request's are handed back once its response
is made, before the first byte; anything that queries later takes one again and hands it back at the end.
"""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.db import connections
from django.utils.decorators import sync_and_async_middleware


@sync_and_async_middleware
def release_before_streaming(get_response):
    # Outermost: every other middleware has had the response (the session saved) before the connection goes.
    if iscoroutinefunction(get_response):

        async def middleware(request):
            response = await get_response(request)
            if response.streaming:
                # In the request's own thread (thread-sensitive), where its connections live.
                await sync_to_async(connections.close_all)()
            return response

    else:

        def middleware(request):
            response = get_response(request)
            if response.streaming:
                connections.close_all()
            return response

    return middleware
