from django.urls import path

from latency.consumers import MeasurementsConsumer

websocket_urlpatterns = [
    path("ws/measurements/", MeasurementsConsumer.as_asgi()),
]
