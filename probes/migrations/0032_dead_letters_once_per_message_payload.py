# Dead letters once per ingest message and payload (probes.fleet.trust.message_identity): a message delivered
# again records none anew. Both columns are new and nullable, so adding them rewrites nothing; letters stored
# before have no message_id and stay outside the partial unique index, duplicates among them included (they are
# evidence, and leave with retention).

import django.db.models.functions.comparison
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0031_ingest_rate_buckets"),
    ]

    operations = [
        migrations.AddField(
            model_name="deadletter",
            name="message_id",
            field=models.CharField(
                blank=True,
                help_text="The ingest message: its task id, or a digest of it when it has none.",
                max_length=64,
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="deadletter",
            name="payload_index",
            field=models.IntegerField(
                blank=True,
                help_text="The payload's place in the message's list; empty for the whole message.",
                null=True,
            ),
        ),
        migrations.AddConstraint(
            model_name="deadletter",
            constraint=models.UniqueConstraint(
                models.F("message_id"),
                django.db.models.functions.comparison.Coalesce(models.F("payload_index"), models.Value(-1)),
                condition=models.Q(("message_id__isnull", False)),
                name="dead_letter_once_per_message_payload",
            ),
        ),
    ]
