# Targets name only variables a worker may send (never the site's own) and CA bundles by their name inside the
# worker's LATENCY_CA_DIR (probes.engine.envpolicy). Rows are left as they are: the central site cannot know a
# worker's directory, and a worker turns an old row that names a site variable, or a bundle outside its directory,
# into a config_error measurement (an absolute path inside the directory still works).

import probes.models
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0029_central_key_and_worker_refusals"),
    ]

    operations = [
        migrations.AlterField(
            model_name="target",
            name="api_key_env",
            field=models.CharField(
                blank=True,
                help_text="Name of the environment variable holding the API key on the workers, e.g. OPENAI_API_KEY. The key itself is never stored here; each worker reads it from its own environment at call time, if its LATENCY_PROVIDER_ENV allows the name (by default, names ending in _API_KEY or _TOKEN).",
                max_length=100,
                validators=[probes.models.validate_env_name],
                verbose_name="API key environment variable",
            ),
        ),
        migrations.AlterField(
            model_name="target",
            name="ca_bundle",
            field=models.CharField(
                blank=True,
                help_text="Name of a PEM file of extra trusted CAs (a private CA, a corporate proxy) inside the directory each worker names in LATENCY_CA_DIR, e.g. corporate-ca.pem. Leave empty to trust the system store only.",
                max_length=500,
                validators=[probes.models.validate_ca_bundle],
                verbose_name="CA bundle",
            ),
        ),
        migrations.AlterField(
            model_name="target",
            name="headers",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text='Extra request headers as a flat JSON object of strings, e.g. {"anthropic-version": "2023-06-01"}. ${VAR} in a value is read from the worker\'s environment, if its LATENCY_PROVIDER_ENV allows the name; secret headers (Authorization, x-api-key, ...) must use ${VAR}.',
                validators=[probes.models.validate_headers],
            ),
        ),
    ]
