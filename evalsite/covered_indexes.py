"""Foreign keys without an index of their own where a composite index already leads with them.

Django gives every foreign key a one-column index. Where a unique constraint or an index
starts with that column (an answer's (question, rater, seq), an assignment's (rater, status)),
the composite one serves every look-up and cascade the one-column index would, and the second
index is only another b-tree each insert writes: an autosave's answer wrote six, a claim's
assignment eight. Such keys say `db_index=False`; `covered_foreign_keys()` finds any that do not
(tests/test_covered_indexes.py keeps the list empty).
"""

from __future__ import annotations

from django.apps import apps
from django.db import migrations, models


def _leading_fields(model) -> set[str]:
    """The first field of each of `model`'s unconditional unique constraints and indexes."""
    meta = model._meta
    leads = {
        c.fields[0]
        for c in meta.constraints
        if isinstance(c, models.UniqueConstraint) and c.condition is None and c.fields
    }
    leads |= {i.fields[0].lstrip("-") for i in meta.indexes if i.condition is None and i.fields}
    leads |= {together[0] for together in meta.unique_together}
    return leads


def covered_foreign_keys(app_labels: tuple[str, ...]) -> list[str]:
    """ "app.Model.field" for each foreign key that keeps its own index although a composite
    index or unique constraint of its model leads with it."""
    found = []
    for label in app_labels:
        for model in apps.get_app_config(label).get_models():
            leads = _leading_fields(model)
            found += [
                f"{label}.{model.__name__}.{field.name}"
                for field in model._meta.local_fields
                if isinstance(field, models.ForeignKey) and field.db_index and field.name in leads
            ]
    return found


class ForeignKeyIndexDropped(migrations.AlterField):
    """AlterField to `db_index=False` that drops only the index, by the name Django gave it.
    Django's own AlterField rebuilds the whole table on SQLite (its rows copied, its history
    triggers dropped with it); dropping one index changes nothing else on either database."""

    def _index(self, app_label, schema_editor, state) -> tuple[str, str, str]:
        model = state.apps.get_model(app_label, self.model_name)
        column = model._meta.get_field(self.name).column
        table = model._meta.db_table
        name = schema_editor._create_index_name(table, [column], suffix="")
        quote = schema_editor.quote_name
        return quote(name), quote(table), quote(column)

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        name, _, _ = self._index(app_label, schema_editor, from_state)
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        name, table, column = self._index(app_label, schema_editor, to_state)
        schema_editor.execute(f"CREATE INDEX {name} ON {table} ({column})")

    def describe(self):
        return f"Drop the index of {self.model_name}.{self.name} (a composite one leads with it)"
