"""TextFlow results go back out in the same shape, with the human labels added."""

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from reviews.models import Project

EXAMPLE = Path(__file__).parent.parent / "data" / "examples" / "textflow-evaluated.json"
pytestmark = pytest.mark.django_db


def test_round_trip_keeps_the_shape_and_adds_human_labels(tmp_path):
    project = Project.objects.create(slug="tf", name="TF")
    call_command("import_items", "--project", "tf", str(EXAMPLE), "--format", "textflow")
    original = json.loads(EXAMPLE.read_text())
    first = original["0"]
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps(
            {
                "type": "human_label",
                "item_id": f"{first['key']}/{first['question_id']}",
                "criterion": "correctness",
                "rater": "ana",
                "label": "Incorrect",
            }
        )
    )
    call_command("import_items", "--project", "tf", str(labels))
    out = tmp_path / "out.json"
    call_command("export_textflow", "--project", project.slug, "--out", str(out))
    exported = json.loads(out.read_text())
    assert list(exported) == [str(i) for i in range(len(original))]
    for key, record in original.items():
        for field in (
            "key",
            "question_id",
            "question",
            "response",
            "answer",
            "decision1",
            "decision2",
            "decision3",
            "final_decision",
        ):
            assert exported[key].get(field) == record.get(field), (key, field)
    assert exported["0"]["human_label"] == "Incorrect"
    assert exported["0"]["human_raters"] == {"ana": "Incorrect"}
    assert "human_label" not in exported["1"]
    assert out.read_text().startswith('{\n    "0": {')  # indent=4, like upstream


def test_a_project_without_textflow_items_is_refused_and_nothing_is_written(tmp_path):
    Project.objects.create(slug="plain", name="Plain")
    out = tmp_path / "out.json"
    with pytest.raises(CommandError, match="no items imported from TextFlow"):
        call_command("export_textflow", "--project", "plain", "--out", str(out))
    assert not out.exists()
