from django.apps import AppConfig


class LatencyConfig(AppConfig):
    name = "latency"
    verbose_name = "Latency Atlas site"

    def ready(self) -> None:
        # The configuration checks register themselves on import (latency.checks).
        from latency import checks  # noqa: F401
