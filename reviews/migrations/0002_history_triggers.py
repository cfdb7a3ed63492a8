from django.db import migrations

from evalsite.history_triggers import migration_operations


class Migration(migrations.Migration):
    dependencies = [("reviews", "0001_initial")]

    # The tables as they were at this migration (later ones add their own).
    operations = [
        migration_operations(
            "reviews",
            tables=[
                "reviews_answer",
                "reviews_resolution",
                "reviews_resolutionsource",
                "reviews_approval",
                "reviews_reference",
                "reviews_event",
            ],
        )
    ]
