"""django.contrib.admin with the site's own index (probes.admin_site): configuration apart from records. In a
module of its own: an AppConfig imported into latency.apps would make Django see two default configs there."""

from django.contrib.admin.apps import AdminConfig


class LatencyAdminConfig(AdminConfig):
    default_site = "probes.admin_site.LatencyAdminSite"
