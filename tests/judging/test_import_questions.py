"""Criterion questions straight from the project (#12): a plain labelling project, no verdicts.

Items get the project's import questions and the ones asked for on import (`--questions`, the
upload form, the API), so they are ready to rate the moment they land.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from judging.models import Verdict
from reviews.models import Decision, Event, Item, ItemStatus, Question, QuestionKind, Role
from reviews.services.assignment.queue import assignment_claim_next
from reviews.services.imports.pipeline import ImportFailed, file_import
from reviews.services.rating.answers import AnswerInput
from tests.factories import member

pytestmark = pytest.mark.django_db

CRITERION = {"type": "criterion", "name": "helpful", "labels": ["yes", "no"], "text": "Helpful?"}


def _jsonl(path: Path, *records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _items_csv(path: Path, n: int) -> Path:
    path.write_text("item_id,input\n" + "".join(f"q{i},question {i}\n" for i in range(n)))
    return path


def test_csv_items_with_questions_are_ready_to_rate(project, tmp_path, rater, rate):
    file_import(actor=None, project=project, path=_jsonl(tmp_path / "c.jsonl", CRITERION))
    report = file_import(
        actor=None,
        project=project,
        path=_items_csv(tmp_path / "items.csv", 3),
        options={"kind": "item", "questions": ["criterion:helpful"]},
    )
    assert report.summary() == "imported 3 items, 3 questions, 0 errors"
    questions = Question.objects.filter(item__project=project)
    assert {(q.kind, q.key, tuple(q.labels), q.prompt) for q in questions} == {
        (QuestionKind.CRITERION, "helpful", ("yes", "no"), "Helpful?")
    }
    assert set(Item.objects.values_list("status", flat=True)) == {ItemStatus.OPEN}
    # One timeline line per new item says what it was asked, not a `question_added` line more.
    imported = Event.objects.filter(kind="imported")
    assert [e.data["questions"] for e in imported] == ["criterion:helpful"] * 3
    assert not Event.objects.filter(kind="question_added").exists()
    assignment = assignment_claim_next(rater=rater, project=project)
    rate(
        rater,
        assignment.item,
        {"helpful": AnswerInput(Decision.LABEL, "yes")},
        assignment=assignment,
    )
    assert not Verdict.objects.exists()  # no verdicts anywhere


def test_the_project_setting_asks_on_every_import_once(project, tmp_path):
    project.import_questions = ["criterion:helpful"]
    project.save()
    path = _jsonl(tmp_path / "a.jsonl", CRITERION, {"type": "item", "item_id": "a"})
    first = file_import(actor=None, project=project, path=path)  # criterion defined in the file
    again = file_import(actor=None, project=project, path=path)
    assert first.counts["questions"] == 1 and again.counts.get("questions", 0) == 0
    assert Question.objects.get().key == "helpful"


def test_an_unknown_criterion_refuses_the_import(project, tmp_path):
    with pytest.raises(ImportFailed) as failure:
        file_import(
            actor=None,
            project=project,
            path=_items_csv(tmp_path / "items.csv", 2),
            options={"kind": "item", "questions": ["criterion:nope"]},
        )
    assert str(failure.value) == (
        "items.csv, questions: questions 'criterion:nope': no criterion 'nope' in this project "
        "(known: none); import a criterion record first"
    )
    assert not Item.objects.exists()


def test_command_and_upload_form_take_questions(
    project, tmp_path, client, capsys, django_capture_on_commit_callbacks
):
    file_import(actor=None, project=project, path=_jsonl(tmp_path / "c.jsonl", CRITERION))
    call_command(
        "import_items",
        str(_items_csv(tmp_path / "one.csv", 1)),
        "--project",
        project.slug,
        "--kind",
        "item",
        "--questions",
        "criterion:helpful",
    )
    assert "imported 1 item, 1 question, 0 errors" in capsys.readouterr().out
    client.force_login(member(project, Role.ADMIN))
    upload = SimpleUploadedFile("more.csv", b"item_id,input\nm1,x\nm2,y\n")

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("import_upload", args=[project.slug]),
            {"file": upload, "kind": "item", "questions": "criterion:helpful"},
        )
    assert response.status_code == 302
    assert Question.objects.filter(key="helpful").count() == 3


def test_items_already_there_get_a_question_added_line_new_ones_say_it_on_import(project, tmp_path):
    file_import(actor=None, project=project, path=_jsonl(tmp_path / "c.jsonl", CRITERION))
    file_import(
        actor=None,
        project=project,
        path=_items_csv(tmp_path / "a.csv", 2),
        options={"kind": "item"},
    )
    file_import(
        actor=None,
        project=project,
        path=_items_csv(tmp_path / "b.csv", 3),  # q0, q1 are there already; q2 is new
        options={"kind": "item", "questions": ["criterion:helpful"]},
    )
    added = Event.objects.filter(kind="question_added")
    assert sorted(e.item.external_id for e in added) == ["q0", "q1"]
    assert {e.data["question"] for e in added} == {"helpful"}
    new = Event.objects.get(kind="imported", item__external_id="q2")
    assert new.data == {"file": "b.csv", "record": "row 3", "questions": "criterion:helpful"}
    assert Question.objects.filter(key="helpful").count() == 3
