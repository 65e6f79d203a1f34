from django.apps import AppConfig


class LatencyConfig(AppConfig):
    name = "latency"
    verbose_name = "Latency Atlas site"
