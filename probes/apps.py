from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ProbesConfig(AppConfig):
    name = "probes"
    verbose_name = _("Probes")
    default_auto_field = "django.db.models.BigAutoField"
