"""Four foreign keys checked by triggers once a statement instead of once a row on PostgreSQL:
item -> project, question -> item, event -> item, event -> actor (evalsite/reference_triggers.py
says why and how). SQLite keeps its own foreign keys: the AlterFields run on PostgreSQL only."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from evalsite.reference_triggers import OnPostgresql, Reference, migration_operation

REFERENCES = (
    Reference("reviews_item", "project_id", "reviews_project"),
    Reference("reviews_question", "item_id", "reviews_item"),
    Reference("reviews_event", "item_id", "reviews_item"),
    Reference("reviews_event", "actor_id", "auth_user"),
)


class Migration(migrations.Migration):
    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("reviews", "0034_json_columns_without_statistics"),
    ]

    operations = [
        OnPostgresql(
            migrations.AlterField(
                model_name="item",
                name="project",
                field=models.ForeignKey(
                    db_constraint=False,
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="items",
                    to="reviews.project",
                ),
            )
        ),
        OnPostgresql(
            migrations.AlterField(
                model_name="question",
                name="item",
                field=models.ForeignKey(
                    db_constraint=False,
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="questions",
                    to="reviews.item",
                ),
            )
        ),
        OnPostgresql(
            migrations.AlterField(
                model_name="event",
                name="item",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="events",
                    to="reviews.item",
                ),
            )
        ),
        OnPostgresql(
            migrations.AlterField(
                model_name="event",
                name="actor",
                field=models.ForeignKey(
                    blank=True,
                    db_constraint=False,
                    db_index=False,
                    null=True,
                    on_delete=django.db.models.deletion.PROTECT,
                    related_name="+",
                    to=settings.AUTH_USER_MODEL,
                ),
            )
        ),
        migration_operation(REFERENCES),
    ]
