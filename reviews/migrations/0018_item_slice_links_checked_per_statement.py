"""Item.slices gets its own link model (`ItemSlice`, the same table) whose two references are
checked by triggers once a statement instead of by foreign keys once a row
(reviews/link_triggers.py says why and how). The item_id index goes: the (item, slice) unique
index serves look-ups by item."""

import django.db.models.deletion
from django.db import migrations, models

from reviews.link_triggers import migration_operation


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0017_event_indexes_unused"),
    ]

    operations = [
        # The table Django made for Item.slices becomes ItemSlice's, as it is.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ItemSlice",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "item",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, to="reviews.item"
                            ),
                        ),
                        (
                            "slice",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, to="reviews.slice"
                            ),
                        ),
                    ],
                    options={
                        "db_table": "reviews_item_slices",
                        "unique_together": {("item", "slice")},
                    },
                ),
                migrations.AlterField(
                    model_name="item",
                    name="slices",
                    field=models.ManyToManyField(
                        blank=True,
                        related_name="items",
                        through="reviews.ItemSlice",
                        to="reviews.slice",
                    ),
                ),
            ],
        ),
        migrations.AlterField(
            model_name="itemslice",
            name="item",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                to="reviews.item",
            ),
        ),
        migrations.AlterField(
            model_name="itemslice",
            name="slice",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                to="reviews.slice",
            ),
        ),
        migration_operation(),
    ]
