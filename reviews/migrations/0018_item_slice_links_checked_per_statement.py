"""Item.slices gets its own link model (`ItemSlice`, the same table) whose two references are
checked by triggers once per statement instead of by foreign keys once per row.

A 100k-item import writes ~230k links; PostgreSQL checked each foreign key of each of them in
its own query at COMMIT, 40% of the import's server time. The triggers below refuse what the
foreign keys refused: a link to an item or slice that does not exist (PostgreSQL: one query a
statement over its new rows, locking the rows it names FOR KEY SHARE as a foreign key does, so
a concurrent delete waits or fails), deleting an item or slice that links still name, and
changing an item's or slice's id. The item_id index goes: the (item, slice) unique index
serves it. SQLite has no statement triggers; its row triggers cost little there.
"""

import django.db.models.deletion
from django.db import migrations, models

# The transition tables have no statistics: without these settings the planner hashed the
# whole item table for every COPY of links. Index look-ups, one per distinct id, are right.
_PLAN = "SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off"

POSTGRESQL = f"""
CREATE FUNCTION reviews_item_slices_refs_exist() RETURNS trigger LANGUAGE plpgsql {_PLAN} AS $$
BEGIN
  IF (SELECT count(*) FROM (SELECT DISTINCT item_id FROM new_links) AS n)
     <> (SELECT count(*) FROM (SELECT i.id FROM reviews_item AS i
         WHERE i.id IN (SELECT item_id FROM new_links) FOR KEY SHARE OF i) AS locked) THEN
    RAISE foreign_key_violation USING MESSAGE =
      'insert or update on table "reviews_item_slices" names an item that does not exist';
  END IF;
  IF (SELECT count(*) FROM (SELECT DISTINCT slice_id FROM new_links) AS n)
     <> (SELECT count(*) FROM (SELECT s.id FROM reviews_slice AS s
         WHERE s.id IN (SELECT slice_id FROM new_links) FOR KEY SHARE OF s) AS locked) THEN
    RAISE foreign_key_violation USING MESSAGE =
      'insert or update on table "reviews_item_slices" names a slice that does not exist';
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER reviews_item_slices_insert AFTER INSERT ON reviews_item_slices
  REFERENCING NEW TABLE AS new_links
  FOR EACH STATEMENT EXECUTE FUNCTION reviews_item_slices_refs_exist();
CREATE TRIGGER reviews_item_slices_update AFTER UPDATE ON reviews_item_slices
  REFERENCING NEW TABLE AS new_links
  FOR EACH STATEMENT EXECUTE FUNCTION reviews_item_slices_refs_exist();

CREATE FUNCTION reviews_item_unlinked() RETURNS trigger LANGUAGE plpgsql {_PLAN} AS $$
BEGIN
  IF EXISTS (SELECT FROM gone JOIN reviews_item_slices AS l ON l.item_id = gone.id) THEN
    RAISE foreign_key_violation USING MESSAGE =
      'delete on table "reviews_item" leaves links in "reviews_item_slices"';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER reviews_item_slices_item_delete AFTER DELETE ON reviews_item
  REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION reviews_item_unlinked();

CREATE FUNCTION reviews_slice_unlinked() RETURNS trigger LANGUAGE plpgsql {_PLAN} AS $$
BEGIN
  IF EXISTS (SELECT FROM gone JOIN reviews_item_slices AS l ON l.slice_id = gone.id) THEN
    RAISE foreign_key_violation USING MESSAGE =
      'delete on table "reviews_slice" leaves links in "reviews_item_slices"';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER reviews_item_slices_slice_delete AFTER DELETE ON reviews_slice
  REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION reviews_slice_unlinked();

CREATE FUNCTION reviews_id_unchanged() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE foreign_key_violation USING MESSAGE =
    format('the id of a row of "%s" does not change (item slice links name it)', TG_TABLE_NAME);
END $$;
CREATE TRIGGER reviews_item_id_unchanged BEFORE UPDATE OF id ON reviews_item
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION reviews_id_unchanged();
CREATE TRIGGER reviews_slice_id_unchanged BEFORE UPDATE OF id ON reviews_slice
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION reviews_id_unchanged();
"""

POSTGRESQL_REVERSE = """
DROP TRIGGER reviews_item_slices_insert ON reviews_item_slices;
DROP TRIGGER reviews_item_slices_update ON reviews_item_slices;
DROP TRIGGER reviews_item_slices_item_delete ON reviews_item;
DROP TRIGGER reviews_item_slices_slice_delete ON reviews_slice;
DROP TRIGGER reviews_item_id_unchanged ON reviews_item;
DROP TRIGGER reviews_slice_id_unchanged ON reviews_slice;
DROP FUNCTION reviews_item_slices_refs_exist();
DROP FUNCTION reviews_item_unlinked();
DROP FUNCTION reviews_slice_unlinked();
DROP FUNCTION reviews_id_unchanged();
"""

_MISSING = (
    "SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: "
    "reviews_item_slices names a missing item or slice')"
)
_LINKS_EXIST = (
    "NOT EXISTS (SELECT 1 FROM reviews_item WHERE id = NEW.item_id) "
    "OR NOT EXISTS (SELECT 1 FROM reviews_slice WHERE id = NEW.slice_id)"
)
SQLITE = [
    f"""CREATE TRIGGER reviews_item_slices_insert BEFORE INSERT ON reviews_item_slices
    WHEN {_LINKS_EXIST} BEGIN {_MISSING}; END""",
    f"""CREATE TRIGGER reviews_item_slices_update BEFORE UPDATE ON reviews_item_slices
    WHEN {_LINKS_EXIST} BEGIN {_MISSING}; END""",
    """CREATE TRIGGER reviews_item_slices_item_delete BEFORE DELETE ON reviews_item
    WHEN EXISTS (SELECT 1 FROM reviews_item_slices WHERE item_id = OLD.id)
    BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: the item has slice links'); END""",
    """CREATE TRIGGER reviews_item_slices_slice_delete BEFORE DELETE ON reviews_slice
    WHEN EXISTS (SELECT 1 FROM reviews_item_slices WHERE slice_id = OLD.id)
    BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: the slice has item links'); END""",
    """CREATE TRIGGER reviews_item_id_unchanged BEFORE UPDATE OF id ON reviews_item
    WHEN OLD.id IS NOT NEW.id
    BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: an item id changed'); END""",
    """CREATE TRIGGER reviews_slice_id_unchanged BEFORE UPDATE OF id ON reviews_slice
    WHEN OLD.id IS NOT NEW.id
    BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: a slice id changed'); END""",
]
TRIGGERS = (
    "reviews_item_slices_insert",
    "reviews_item_slices_update",
    "reviews_item_slices_item_delete",
    "reviews_item_slices_slice_delete",
    "reviews_item_id_unchanged",
    "reviews_slice_id_unchanged",
)


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRESQL, params=None)  # no placeholders: % is format()'s
    else:
        for statement in SQLITE:
            schema_editor.execute(statement)


def remove(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRESQL_REVERSE, params=None)
    else:
        for name in TRIGGERS:
            schema_editor.execute(f"DROP TRIGGER {name}")


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
        migrations.RunPython(install, remove),
    ]
