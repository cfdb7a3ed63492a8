"""PostgreSQL: `evalsite_analyze_changed()`, run as the tables' owner (SECURITY DEFINER), so the
site's role, which owns no table, can bring planner statistics up to date after a bulk write
(evalsite/planner_statistics.py). No argument, so no caller chooses what it touches: it
analyzes the owner's tables whose changes since their last ANALYZE pass autovacuum's default
threshold (50 rows + 10 % of the table), which autovacuum would analyze at its next wake-up."""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION evalsite_analyze_changed() RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    changed record;
BEGIN
    FOR changed IN
        SELECT s.schemaname, s.relname
        FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
        WHERE c.relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
          AND s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
        ORDER BY s.relname
    LOOP
        EXECUTE format('ANALYZE %I.%I', changed.schemaname, changed.relname);
        RETURN NEXT changed.relname;
    END LOOP;
END
$$;
"""
DROP = "DROP FUNCTION IF EXISTS evalsite_analyze_changed()"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE, params=None)  # "%I" is format()'s, not a placeholder


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = []
    operations = [migrations.RunPython(create, drop, elidable=False)]
