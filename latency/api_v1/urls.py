"""/api/v1/: the resources, the OpenAPI 3 schema (schema/) and the docs page (docs/, Swagger UI from our own
static files, its script a separate same-origin file so the site's CSP holds)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.urls import include, path, re_path
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from latency.api_v1.config import ProbeViewSet, RegionViewSet, TargetViewSet
from latency.api_v1.modelgroups import ModelGroupViewSet
from latency.api_v1.reads import AggregateViewSet, IncidentViewSet, MeasurementViewSet, WorkerView
from latency.api_v1.slos import ObjectiveViewSet
from latency.api_v1.statuspages import StatusPageViewSet

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("regions", RegionViewSet, basename="region")
router.register("targets", TargetViewSet, basename="target")
router.register("probes", ProbeViewSet, basename="probe")
router.register("model-groups", ModelGroupViewSet, basename="model-group")
router.register("slos", ObjectiveViewSet, basename="slo")
router.register("status-pages", StatusPageViewSet, basename="status-page")
router.register("measurements", MeasurementViewSet, basename="measurement")
router.register("aggregates", AggregateViewSet, basename="aggregate")
router.register("incidents", IncidentViewSet, basename="incident")


# Exempt like the API's views (DRF checks CSRF itself, for sessions): a PUT to a wrong path is a 404, and this
# view reads and changes nothing.
@csrf_exempt
def not_found(request, rest: str = "") -> JsonResponse:
    """Anything else under /api/v1/ (an id that is no number, a path no resource has): a JSON 404 like the
    API's others, not the site's HTML page."""
    return JsonResponse({"detail": _("Not found.")}, status=404)


app_name = "api-v1"
urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # A page for people: sign in first (a redirect to the login form, not a JSON 401).
    path("docs/", login_required(SpectacularSwaggerSplitView.as_view(url_name="api-v1:schema")), name="docs"),
    # One answer, not a list of pages: the workers and their regions' health.
    path("workers/", WorkerView.as_view(), name="workers"),
    # The spelling, without the router's trailing slash: sent on to the resource, the query kept.
    path(
        "model-groups/<int:pk>/leaderboard",
        RedirectView.as_view(pattern_name="api-v1:model-group-leaderboard", query_string=True),
    ),
    path("", include(router.urls)),
    re_path(r"^(?P<rest>[\s\S]*)$", not_found),
]
