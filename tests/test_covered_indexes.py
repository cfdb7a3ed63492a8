"""A foreign key that leads a composite index has no index of its own (evalsite/covered_indexes.py),
and the migration that dropped those indexes drops only them."""

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from evalsite.covered_indexes import ForeignKeyIndexDropped, covered_foreign_keys


def _one_column_indexes(table: str) -> dict[str, list[str]]:
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, table)
    return {
        name: c["columns"]
        for name, c in found.items()
        if c["index"] and not c["unique"] and not c["primary_key"]
    }


def test_no_foreign_key_keeps_an_index_a_composite_one_leads_with():
    assert covered_foreign_keys(("reviews", "judging")) == []


@pytest.mark.django_db
def test_the_write_paths_tables_keep_one_index_per_leading_column():
    answer = _one_column_indexes("reviews_answer")
    assert ["question_id"] not in answer.values()  # answer_unique_seq leads with it
    assert ["rater_id"] in answer.values()  # no composite index leads with the rater
    assignment = _one_column_indexes("reviews_assignment")
    assert ["item_id"] not in assignment.values() and ["rater_id"] not in assignment.values()
    assert ["item_id", "status"] in assignment.values()


@pytest.mark.django_db(transaction=True)
def test_the_operation_drops_and_restores_only_that_index():
    state = MigrationLoader(connection).project_state()
    field = state.apps.get_model("reviews", "Answer")._meta.get_field("question")
    operation = ForeignKeyIndexDropped(model_name="answer", name="question", field=field.clone())
    before = _one_column_indexes("reviews_answer")
    with connection.schema_editor() as editor:
        operation.database_backwards("reviews", editor, state, state)
    restored = _one_column_indexes("reviews_answer")
    assert [c for n, c in restored.items() if n not in before] == [["question_id"]]
    with connection.schema_editor() as editor:
        operation.database_forwards("reviews", editor, state, state)
    assert _one_column_indexes("reviews_answer") == before
