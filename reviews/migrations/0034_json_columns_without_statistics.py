"""PostgreSQL: no planner statistics for the JSON columns an import fills and no query filters,
sorts or groups on (items' input, output, reference and metadata; timeline events' data;
questions' label sets and options).

The ANALYZE an import runs before it answers (evalsite/planner_statistics.py) spent most of its
time on these: sampling and sorting JSON documents to find common values no plan uses (a
filter inside a document, `data -> 'export'`, is estimated without them either way). At 100k
items `ANALYZE reviews_item` took 1.15 s with them, 0.30 s without (bench/README.md). Every
other column keeps its statistics; `STATISTICS -1` (the default) puts them back.
"""

from django.db import migrations

COLUMNS = {
    "reviews_item": ("input", "output", "expected", "metadata"),
    "reviews_event": ("data",),
    "reviews_question": ("labels", "options"),
}


def _set(target: int):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for table, columns in COLUMNS.items():
            changes = ", ".join(f'ALTER COLUMN "{c}" SET STATISTICS {target}' for c in columns)
            schema_editor.execute(f'ALTER TABLE "{table}" {changes}')

    return run


class Migration(migrations.Migration):
    dependencies = [("reviews", "0033_project_data_version")]

    operations = [migrations.RunPython(_set(0), _set(-1))]
