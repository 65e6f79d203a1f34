import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency.settings")
# As django.core.asgi.get_asgi_application, with the middleware run synchronously (latency.asgi_handler).
django.setup(set_prefix=False)

from latency.asgi_handler import SynchronousChainASGIHandler  # noqa: E402

django_asgi_app = SynchronousChainASGIHandler()

from django.conf import settings  # noqa: E402

# Under ASGI each request runs its synchronous parts (sessions, auth, the
# ORM) in a thread of its own, so a persistent connection is one connection
# per request left open for CONN_MAX_AGE: 20 parallel requests held 20 idle
# connections besides their work. Django's documentation says to disable
# persistent connections under ASGI; the web process closes each at the end
# of its request (workers keep theirs).
settings.DATABASES["default"]["CONN_MAX_AGE"] = 0

# These import models (via the auth middleware and the consumer), so they
# need Django set up first.
from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from latency.routing import websocket_urlpatterns  # noqa: E402
from latency.security import SameOriginValidator, require_collected_static  # noqa: E402
from latency.startup import Lifespan  # noqa: E402

# In production a missing `collectstatic` would turn every page into a 500:
# refuse to start instead, naming the command.
require_collected_static()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Only pages served from this very origin (scheme, host and port) may open the feed.
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        # The server's start (uvicorn sends it before it listens): what a first
        # request would do lazily is done then (latency.startup). Importing this
        # module, as tests do, runs none of it.
        "lifespan": Lifespan(),
    }
)
