"""/api/v1/: the resources, the OpenAPI 3 schema (schema/) and the docs page (docs/, Swagger UI from our own
static files, its script a separate same-origin file so the site's CSP holds)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from latency.api_v1.config import ProbeViewSet, RegionViewSet, TargetViewSet
from latency.api_v1.reads import AggregateViewSet, IncidentViewSet, MeasurementViewSet, WorkerViewSet

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("regions", RegionViewSet, basename="region")
router.register("targets", TargetViewSet, basename="target")
router.register("probes", ProbeViewSet, basename="probe")
router.register("measurements", MeasurementViewSet, basename="measurement")
router.register("aggregates", AggregateViewSet, basename="aggregate")
router.register("incidents", IncidentViewSet, basename="incident")
router.register("workers", WorkerViewSet, basename="worker")

app_name = "api-v1"
urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # A page for people: sign in first (a redirect to the login form, not a JSON 401).
    path("docs/", login_required(SpectacularSwaggerSplitView.as_view(url_name="api-v1:schema")), name="docs"),
    path("", include(router.urls)),
]
