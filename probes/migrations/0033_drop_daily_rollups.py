# The daily rollups go: no reader reads them any more (complete days come from the series blocks of days, merged
# from the 12 h series blocks, or from those blocks and hourly rows), and no builder writes them. Its indexes and
# constraint go with the table. The series blocks of days already marked were merged from daily rows that were the
# merge of their hours, so their marks stay true; every later rebuild of one of their days unmarks them as before.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("probes", "0032_dead_letters_once_per_message_payload"),
    ]

    operations = [
        migrations.DeleteModel(
            name="DailyRollup",
        ),
    ]
