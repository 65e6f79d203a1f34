from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0013_target_provider"),
    ]

    operations = [
        migrations.AddField(
            model_name="notificationchannel",
            name="url_env",
            field=models.CharField(
                blank=True,
                default="",
                editable=False,
                help_text=(
                    "Set by manage.py atlas apply: the environment variable the URL was read from (the URL itself "
                    "never goes in a file). Empty when the URL was typed here."
                ),
                max_length=100,
                verbose_name="URL environment variable",
            ),
        ),
    ]
