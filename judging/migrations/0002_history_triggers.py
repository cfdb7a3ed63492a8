from django.db import migrations

from evalsite.history_triggers import migration_operations


class Migration(migrations.Migration):
    dependencies = [("judging", "0001_initial")]

    operations = [
        migration_operations(
            "judging",
            tables=[
                "judging_humanlabel",
                "judging_heldoutaccess",
                "judging_dashboardsnapshot",
                "judging_failuretag",
            ],
        )
    ]
