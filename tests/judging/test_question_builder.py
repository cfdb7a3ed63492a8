"""Questions defined in the browser and by `manage.py criterion` (issue 28): one form, one
service, the same refusals; a changed definition is a new version, asked from then on, while
questions already asked keep theirs."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from judging.models import Criterion
from reviews.forms_questions import QuestionDefinitionForm
from reviews.models import (
    Assignment,
    Decision,
    Project,
    ProjectAction,
    ProjectEvent,
    Question,
    Role,
)
from reviews.services.imports.questions import questions_add_to_items, resolve
from reviews.services.projects.questions import question_define
from reviews.services.rating.answers import AnswerError, AnswerInput
from tests.factories import ItemFactory, UserFactory, member

pytestmark = pytest.mark.django_db


def _form(**data) -> QuestionDefinitionForm:
    return QuestionDefinitionForm({"kind": "choice", **data})


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        ({"name": "a b", "labels": "x,y"}, "name", "no spaces"),
        ({"name": "ok", "labels": "x"}, "labels", "at least two labels"),
        ({"name": "ok", "labels": "x\nx"}, "labels", "x is repeated"),
        ({"name": "ok", "kind": "pass_fail", "labels": "a,b,c"}, "labels", "exactly two"),
        ({"name": "ok", "labels": "a,b", "positive": "c"}, "positive", "'c' is not one of"),
        ({"name": "ok", "kind": "free_text", "labels": "a,b"}, "labels", "no labels"),
        ({"name": "ok", "kind": "pairwise", "labels": "yes,no"}, "labels", "A, B, tie"),
    ],
)
def test_the_builder_refuses_beside_the_field(data, field, words):
    form = _form(**data)
    assert not form.is_valid()
    assert words in " ".join(form.errors[field])


def test_kinds_make_their_labels():
    pass_fail = _form(name="legible", kind="pass_fail", labels="yes\nno")
    assert pass_fail.is_valid(), pass_fail.errors
    assert pass_fail.definition().positive == "yes"  # the first label passes unless named
    free = _form(name="transcript", kind="free_text")
    assert free.is_valid() and free.definition().labels == []
    pair = _form(name="pref", kind="pairwise")
    assert pair.is_valid() and pair.definition().labels == ["A", "B", "tie"]


def test_a_changed_question_is_a_new_version_and_asked_questions_keep_theirs(project):
    first = _form(name="legible", kind="pass_fail", labels="yes,no", text="Readable?")
    assert first.is_valid()
    defined = question_define(project=project, actor=None, definition=first.definition())
    assert (defined.request, defined.version, defined.created) == ("criterion:legible", "1", True)
    again = question_define(project=project, actor=None, definition=first.definition())
    assert (again.version, again.created) == ("1", False)
    item = ItemFactory(project=project)
    questions_add_to_items(
        [item.pk], resolve(project, ["criterion:legible"], file="x"), actor=None, file="x"
    )
    changed = _form(name="legible", kind="choice", labels="yes,no,partly", text="Readable?")
    assert changed.is_valid()
    second = question_define(project=project, actor=None, definition=changed.definition())
    assert second.version == "2"
    asked = Question.objects.get(item=item)
    assert (asked.labels, asked.criterion_version) == (["yes", "no"], "1")
    later = ItemFactory(project=project)
    questions_add_to_items(
        [later.pk], resolve(project, ["criterion:legible"], file="x"), actor=None, file="x"
    )
    assert Question.objects.get(item=later).labels == ["yes", "no", "partly"]
    audit = ProjectEvent.objects.filter(action=ProjectAction.CRITERION_DEFINED).order_by("id")
    assert [e.target for e in audit] == ["legible v1", "legible v2"]
    assert audit[1].after == {"version": "2", "labels": ["yes", "no", "partly"], "positive": ""}


def test_the_command_defines_with_the_builders_rules_and_words(project, capsys):
    call_command(
        "criterion",
        "--project",
        project.slug,
        "--name",
        "legible",
        "--labels",
        "yes,no",
        "--positive",
        "yes",
        "--critical",
        "--text",
        "Can you read it?",
    )
    assert "criterion:legible: defined version 1" in capsys.readouterr().out
    stored = Criterion.objects.get(project=project, name="legible")
    assert (stored.labels, stored.positive_label, stored.critical) == (["yes", "no"], "yes", True)
    with pytest.raises(CommandError) as refused:
        call_command("criterion", "--project", project.slug, "--name", "legible", "--labels", "yes")
    form = _form(name="legible", labels="yes")
    form.is_valid()
    assert form.errors["labels"][0] in str(refused.value)
    call_command(
        "criterion", "--project", project.slug, "--name", "stars", "--labels", "1,2,3", "--ordinal"
    )
    assert Criterion.objects.get(name="stars").ordinal


def _staff_client(client):
    user = UserFactory(is_staff=True)
    client.force_login(user)
    return user


def test_new_project_with_its_first_question_asks_it_on_every_import(client):
    _staff_client(client)
    response = client.post(
        reverse("project_new"),
        {
            "name": "Scans",
            "slug": "",
            "overlap": 2,
            "resolution_rule": "unanimous",
            "q-name": "legible",
            "q-kind": "pass_fail",
            "q-labels": "yes\nno",
            "q-text": "Readable?",
        },
    )
    assert response.status_code == 302
    project = Project.objects.get(slug="scans")
    assert project.import_questions == ["criterion:legible"]
    assert Criterion.objects.get(project=project).labels == ["yes", "no"]


def test_a_refused_new_project_keeps_what_was_typed_and_creates_nothing(client):
    _staff_client(client)
    response = client.post(
        reverse("project_new"),
        {
            "name": "Scans",
            "overlap": 2,
            "resolution_rule": "unanimous",
            "q-name": "legible",
            "q-kind": "pass_fail",
            "q-labels": "yes\nno\nmaybe",
            "q-text": "Readable?",
        },
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "Pass/fail has exactly two labels (3 given)" in page
    assert (
        'value="Scans"' in page
        and "yes\nno\nmaybe</textarea>" in page
        and "Readable?</textarea>" in page
    )
    assert not Project.objects.exists()


def test_a_template_fills_the_builder_and_saves_nothing(client):
    _staff_client(client)
    response = client.post(
        reverse("project_new"), {"name": "Scans", "q-name": "stars", "q-template": "rating-1-5"}
    )
    assert response.status_code == 200 and not Project.objects.exists()
    page = response.content.decode()
    assert 'value="stars"' in page and "1\n2\n3\n4\n5</textarea>" in page
    assert "errorlist" not in page


def test_the_preview_shows_what_a_rater_sees(client):
    _staff_client(client)
    response = client.post(
        reverse("question_builder"),
        {
            "q-name": "legible",
            "q-kind": "choice",
            "q-labels": "sharp\nblurred",
            "q-text": "Is it readable?",
        },
        HTTP_HX_REQUEST="true",
    )
    page = response.content.decode()
    assert '<h3 class="question-title">legible</h3>' in page
    assert (
        "Is it readable?" in page
        and "<kbd>1</kbd> sharp" in page
        and "<kbd>2</kbd> blurred" in page
    )


def test_questions_page_defines_versions_for_admins_only(client, project):
    admin = member(project, Role.ADMIN)
    client.force_login(admin)
    url = reverse("questions", args=[project.slug])
    bad = client.post(url, {"q-name": "legible", "q-kind": "choice", "q-labels": "a"})
    assert bad.status_code == 200 and "at least two labels" in bad.content.decode()
    assert 'value="legible"' in bad.content.decode()
    client.post(url, {"q-name": "legible", "q-kind": "choice", "q-labels": "a\nb"})
    client.post(url, {"q-name": "legible", "q-kind": "choice", "q-labels": "a\nb\nc"})
    assert sorted(Criterion.objects.values_list("version", flat=True)) == ["1", "2"]
    page = client.get(url + "?edit=legible").content.decode()
    assert "New version of legible" in page and "a\nb\nc</textarea>" in page
    client.force_login(member(project, Role.RATER))
    assert (
        client.post(url, {"q-name": "x", "q-kind": "choice", "q-labels": "a\nb"}).status_code == 403
    )


def test_a_free_text_question_is_answered_by_typing(project, rate):
    definition = _form(name="transcript", kind="free_text", text="What does it say?")
    assert definition.is_valid()
    question_define(project=project, actor=None, definition=definition.definition())
    item = ItemFactory(project=project)
    questions_add_to_items(
        [item.pk], resolve(project, ["criterion:transcript"], file="x"), actor=None, file="x"
    )
    rater = member(project, Role.RATER)
    with pytest.raises(AnswerError, match="Type an answer"):
        rate(rater, item, {"transcript": AnswerInput(Decision.LABEL, "  ")}, submit=False)
    assignment = Assignment.objects.get(item=item, rater=rater)
    typed = {"transcript": AnswerInput(Decision.LABEL, " Total 12.00 ")}
    rate(rater, item, typed, assignment=assignment)
    answer = Question.objects.get(item=item).answers.get()
    assert (answer.decision, answer.value) == (Decision.LABEL, "Total 12.00")


def test_the_rater_types_a_free_text_answer_in_the_review_page(client, project):
    definition = _form(name="transcript", kind="free_text", text="What does it say?")
    assert definition.is_valid()
    question_define(project=project, actor=None, definition=definition.definition())
    item = ItemFactory(project=project)
    asked = resolve(project, ["criterion:transcript"], file="x")
    questions_add_to_items([item.pk], asked, actor=None, file="x")
    client.force_login(member(project, Role.RATER))
    claimed = client.post(reverse("review_next", args=[project.slug]))
    page = client.get(claimed.url).content.decode()
    assert 'aria-label="Answer to transcript"' in page and "What does it say?" in page
    question = Question.objects.get(item=item)
    save = reverse("answer_save", args=[project.slug, item.pk, question.pk])
    assert client.post(save, {"choice": "value", "value": "  Total 12.00 "}).status_code == 200
    answer = question.answers.get()
    assert (answer.decision, answer.value) == (Decision.LABEL, "Total 12.00")
