from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

from latency import (
    api,
    export_views,
    incident_views,
    metrics_views,
    model_views,
    otlp_views,
    rum_views,
    slo_views,
    status_views,
    views,
)

urlpatterns = [
    path("", views.overview, name="overview"),
    path("regions/<slug:slug>/", views.region_detail, name="region"),
    path("where/", views.where_users_are, name="where-users-are"),
    path("targets/<int:target_id>/", views.target_detail, name="target"),
    path("models/", model_views.model_groups, name="model-groups"),
    path("models/<int:group_id>/", model_views.model_group, name="model-group"),
    path("incidents/", incident_views.incidents, name="incidents"),
    path("incidents/<int:incident_id>/", incident_views.incident_detail, name="incident"),
    path("incidents/<int:incident_id>/acknowledge", incident_views.acknowledge, name="incident-acknowledge"),
    path("incidents/<int:incident_id>/updates", incident_views.post_update, name="incident-update"),
    path("slos/", slo_views.objectives, name="slos"),
    path("slos/<int:slo_id>/", slo_views.objective, name="slo"),
    path("slos/<int:slo_id>/report", slo_views.report, name="slo-report"),
    path("status/<slug:slug>/", status_views.status_page, name="status-page"),
    path("status/<slug:slug>/feed.atom", status_views.status_feed, name="status-feed"),
    path("status/<slug:slug>/badge/<int:target_id>.svg", status_views.badge, name="status-badge"),
    path("status/<slug:slug>/api/v2/summary.json", status_views.summary_json, name="status-summary"),
    path("targets/<int:target_id>/silence", incident_views.silence_target, name="target-silence"),
    path("silences/<int:silence_id>/end", incident_views.end_silence, name="silence-end"),
    # The REST API (latency.api_v1): tokens or the session, the admin's permissions, an OpenAPI 3 schema.
    path("api/v1/", include("latency.api_v1.urls")),
    path("api/meta", api.meta, name="api-meta"),
    path("api/overview", api.overview, name="api-overview"),
    path("api/histograms", api.histograms, name="api-histograms"),
    path("api/timeseries", api.timeseries, name="api-timeseries"),
    path("api/phases", api.phases, name="api-phases"),
    path("api/table", api.table, name="api-table"),
    path("api/workers", api.workers, name="api-workers"),
    path("api/real-users", api.real_users, name="api-real-users"),
    path("api/workloads", api.workloads, name="api-workloads"),
    # Prometheus: its bearer token or a signed-in session (latency.access.metrics_reader).
    path("metrics", metrics_views.metrics, name="metrics"),
    path("export/measurements.csv", export_views.measurements, name="export-measurements"),
    path("export/regions.csv", export_views.regions, name="export-regions"),
    path("export/real-users.csv", export_views.real_users, name="export-real-users"),
    path("export/workloads.csv", export_views.workloads, name="export-workloads"),
    path("export/slo-report.csv", slo_views.report_csv, name="export-slo-report"),
    # Public, key-authenticated and csrf_exempt: other sites' pages send it (latency.rum_views).
    path("rum/v1/beacon", rum_views.beacon, name="rum-beacon"),
    # OTLP/HTTP receiver: public, authenticated by an ingest token (latency/otlp_views.py).
    path("otlp/v1/traces", otlp_views.traces, name="otlp-traces"),
    path("otlp/v1/metrics", otlp_views.metrics, name="otlp-metrics"),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(template_name="registration/login.html", redirect_authenticated_user=True),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(next_page="overview"), name="logout"),
    path("admin/", admin.site.urls),
    # Django's set_language view at /i18n/setlang/ (POST, CSRF-checked): the
    # language switch in the header. Public: choosing a language reads nothing.
    path("i18n/", include("django.conf.urls.i18n")),
    # The translated strings of static/js/*.js (gettext() in the browser); public
    # like the static files themselves.
    path("jsi18n/", JavaScriptCatalog.as_view(domain="djangojs"), name="javascript-catalog"),
]
