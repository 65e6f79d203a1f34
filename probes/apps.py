from django.apps import AppConfig


class ProbesConfig(AppConfig):
    name = "probes"
    verbose_name = "Probes"
    default_auto_field = "django.db.models.BigAutoField"
