"""Foreign keys a composite index already leads with lose their own index
(evalsite/covered_indexes.py): one b-tree fewer for each insert to write. Only the index is
dropped, by name: no table is rebuilt."""

import django.db.models.deletion
from django.db import migrations, models

from evalsite.covered_indexes import ForeignKeyIndexDropped


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0014_verdict_label_indexes"),
        ("reviews", "0036_covered_foreign_key_indexes"),
    ]

    operations = [
        ForeignKeyIndexDropped(
            model_name="criterion",
            name="project",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="criteria",
                to="reviews.project",
            ),
        ),
        ForeignKeyIndexDropped(
            model_name="failurebucket",
            name="project",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="failure_buckets",
                to="reviews.project",
            ),
        ),
        ForeignKeyIndexDropped(
            model_name="gatesetting",
            name="project",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="gate_settings",
                to="reviews.project",
            ),
        ),
        ForeignKeyIndexDropped(
            model_name="judge",
            name="project",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="judges",
                to="reviews.project",
            ),
        ),
        ForeignKeyIndexDropped(
            model_name="judgeconfig",
            name="project",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="judge_configs",
                to="reviews.project",
            ),
        ),
        ForeignKeyIndexDropped(
            model_name="judgeversion",
            name="config",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="versions",
                to="judging.judgeconfig",
            ),
        ),
        ForeignKeyIndexDropped(
            model_name="labelrequest",
            name="criterion",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="label_requests",
                to="judging.criterion",
            ),
        ),
        ForeignKeyIndexDropped(
            model_name="panel",
            name="project",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="panels",
                to="reviews.project",
            ),
        ),
        ForeignKeyIndexDropped(
            model_name="runclaim",
            name="run",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="claims",
                to="judging.run",
            ),
        ),
    ]
