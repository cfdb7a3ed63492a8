from django.db import migrations

from reviews.history_triggers import migration_operations


class Migration(migrations.Migration):
    dependencies = [("reviews", "0001_initial")]

    operations = [migration_operations("reviews")]
