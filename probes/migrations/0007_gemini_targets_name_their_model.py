"""Gemini targets saved before the model field was filled from the URL kept
it blank, and every page and export showed no model for them. Fill it from a
full .../models/NAME:streamGenerateContent (or :generateContent) URL, as the
admin now does on save; an API base URL names no model and stays as it is.

The rule is copied here (probes.engine.styles.gemini.model_in_url as of this
migration): a migration must give the same result whatever later code says.
"""

import re
from urllib.parse import unquote, urlsplit

from django.db import migrations

MODEL_IN_PATH = re.compile(r"/models/([^/:]+):(?:streamGenerateContent|generateContent)$")


def fill_models(apps, schema_editor):
    Target = apps.get_model("probes", "Target")
    for target in Target.objects.filter(api_style="gemini", model="").only("id", "url"):
        match = MODEL_IN_PATH.search(urlsplit(target.url or "").path)
        if match:
            Target.objects.filter(id=target.id, model="").update(model=unquote(match.group(1)))


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0006_tokens_per_s_histograms"),
    ]

    # Backwards: nothing to undo (a filled model is what the admin writes too).
    operations = [migrations.RunPython(fill_models, migrations.RunPython.noop)]
