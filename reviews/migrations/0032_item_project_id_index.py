# The item list reads a project's items in id order from the (project, id) index, which also
# serves every look-up by project: the foreign key's own one-column index goes. Dropped by name
# rather than by AlterField, which would rebuild the whole table on SQLite (and trip the
# item-slice link triggers that name it).

import django.db.models.deletion
from django.db import migrations, models

FOREIGN_KEY_INDEX = "reviews_item_project_id_337c889e"


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0031_audit_panels_gates_lockouts_slices"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="item",
            index=models.Index(fields=["project", "id"], name="item_project_id"),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="item",
                    name="project",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="items",
                        to="reviews.project",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX IF EXISTS {FOREIGN_KEY_INDEX}",
                    f"CREATE INDEX {FOREIGN_KEY_INDEX} ON reviews_item (project_id)",
                ),
            ],
        ),
    ]
