"""Item revisions: a re-import that changes an item's content numbers a new revision, and every
figure counts only verdicts and labels given on the current one (the stale ones counted apart).

The measured failure: 60 items judged and labelled, 12 outputs changed by re-import, and the
judge's agreement row still counted 60 items; a re-run's new "fail" was dropped and the old
"pass" kept."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from judging.models import Call, Criterion, HumanLabel, Run, Verdict
from judging.selectors_labels import final_labels, stale_label_items
from judging.services.dashboard import dashboard_refresh
from judging.stub_model import answer
from reviews.models import (
    AssignmentStatus,
    Decision,
    Event,
    Item,
    ItemRevision,
    ItemStatus,
    QuestionReason,
    QuestionStatus,
    Role,
)
from reviews.selectors import rater_workspace
from reviews.services.assignment.queue import assignment_claim_next
from reviews.services.rating.answers import AnswerError, AnswerInput
from reviews.services.revisions import content_sha256
from tests.builders import rate
from tests.factories import member
from tests.judging.helpers import (
    criterion_record,
    human_record,
    import_items,
    item_record,
    report_json,
    row_for,
    see_held_out,
    verdict_record,
    write_jsonl,
)
from tests.judging.run_helpers import judge, labelled_project, sent_data
from tests.judging.test_record_import import refused
from tests.judging.wire_server import Say, WireServer

pytestmark = pytest.mark.django_db

JUDGE_NAME = "openai/gpt-4o"


def _items(n=10, changed=(), **fields):
    """n items; those in `changed` get another output."""
    return [
        item_record(
            f"i{i:02}",
            input={"question": f"q{i}", "context": ["a", "b"]},
            output=f"new answer {i}" if i in changed else f"answer {i}",
            reference=f"answer {i}",
            **fields,
        )
        for i in range(n)
    ]


def _judged_and_labelled(project, tmp_path, n=10):
    """n items, each with a judge verdict and a human label that agree (pass on even items)."""
    records = [criterion_record(), *_items(n)]
    for i in range(n):
        label = "pass" if i % 2 == 0 else "fail"
        records += [verdict_record(f"i{i:02}", label), human_record(f"i{i:02}", "rita", label)]
    import_items(project, write_jsonl(tmp_path / "v1.jsonl", records))


def test_reimport_of_the_same_content_in_another_order_makes_no_revision(project, tmp_path):
    import_items(project, write_jsonl(tmp_path / "v1.jsonl", _items(3)))
    reordered = [
        # keys of every record and of the nested input in another order, records reversed
        {
            "output": r["output"],
            "reference": r["reference"],
            "input": {"context": ["a", "b"], "question": r["input"]["question"]},
            "item_id": r["item_id"],
            "type": "item",
        }
        for r in reversed(_items(3))
    ]
    out = import_items(project, write_jsonl(tmp_path / "v2.jsonl", reordered))
    assert "3 unchanged" in out
    assert set(Item.objects.values_list("revision", flat=True)) == {1}
    assert not ItemRevision.objects.exists()


def test_a_changed_output_adds_a_revision_and_keeps_the_old_content(project, tmp_path):
    import_items(project, write_jsonl(tmp_path / "v1.jsonl", _items(3)))
    out = import_items(project, write_jsonl(tmp_path / "v2.jsonl", _items(3, changed={1})))
    assert "1 with changed content" in out
    changed = Item.objects.get(external_id="i01")
    assert (changed.revision, changed.output) == (2, "new answer 1")
    kept = ItemRevision.objects.get()
    assert (kept.item_id, kept.number, kept.output, kept.replaced_by_file) == (
        changed.pk,
        1,
        "answer 1",
        "v2.jsonl",
    )
    assert kept.sha256 == content_sha256(
        input=kept.input, output="answer 1", expected="answer 1", evidence=[]
    )
    assert Event.objects.get(item=changed, kind="updated").data["revision"] == 2
    assert set(Item.objects.exclude(pk=changed.pk).values_list("revision", flat=True)) == {1}
    # A list's order is content: the context given in another order is a new revision.
    flipped = _items(3, changed={1})
    flipped[0]["input"]["context"] = ["b", "a"]
    import_items(project, write_jsonl(tmp_path / "v3.jsonl", flipped))
    assert Item.objects.get(external_id="i00").revision == 2


def test_content_fingerprint_is_canonical():
    one = content_sha256(
        input={"a": 1, "b": [1, 2]}, output="x", expected=None, evidence=["p", "q"]
    )
    same = content_sha256(
        input={"b": [1, 2], "a": 1}, output="x", expected=None, evidence=["q", "p"]
    )
    other = content_sha256(input={"a": 1, "b": [2, 1]}, output="x", expected=None, evidence=["p"])
    assert one == same != other


def test_agreement_counts_current_items_and_the_stale_ones_apart(project, tmp_path):
    _judged_and_labelled(project, tmp_path)
    before = row_for(report_json(project, "--split", "all"), "faithful", JUDGE_NAME)
    assert (before["n"], before["stale_verdicts"], before["stale_labels"]) == (10, 0, 0)

    import_items(project, write_jsonl(tmp_path / "v2.jsonl", _items(10, changed={1, 4, 7})))
    row = row_for(report_json(project, "--split", "all"), "faithful", JUDGE_NAME)
    assert (row["n"], row["n_judged"], row["n_human"]) == (7, 7, 7)
    assert (row["stale_verdicts"], row["stale_labels"]) == (3, 3)
    assert Verdict.objects.count() == 10 and HumanLabel.objects.count() == 10  # all kept

    # New verdicts and labels on the changed items count again; the old ones stay stale.
    again = []
    for i in (1, 4, 7):
        again += [verdict_record(f"i{i:02}", "fail"), human_record(f"i{i:02}", "rita", "pass")]
    import_items(project, write_jsonl(tmp_path / "v3.jsonl", again))
    row = row_for(report_json(project, "--split", "all"), "faithful", JUDGE_NAME)
    assert (row["n"], row["stale_verdicts"], row["stale_labels"]) == (10, 3, 3)
    assert row["label_counts"]["human"]["pass"] == 5 + 2  # i01 and i07 relabelled pass
    assert Verdict.objects.filter(revision=2).count() == 3


def test_a_label_contradicting_one_on_the_same_revision_is_still_refused(project, tmp_path):
    _judged_and_labelled(project, tmp_path, n=2)
    path = write_jsonl(tmp_path / "v2.jsonl", [human_record("i00", "rita", "fail")])
    assert "on the same revision of the item" in refused(project, path)


@pytest.fixture
def server():
    with WireServer("openai-compatible", answer=lambda r: Say(answer(r["json"]))) as srv:
        yield srv


def _run(project):
    out = StringIO()
    call_command(
        "run_judge", "--project", project.slug, "--judge", "j", "--split", "all", stdout=out
    )
    return Run.objects.latest("created_at")


def _changed_outputs(project, tmp_path, changed, name="v2.jsonl"):
    """Re-import the labelled project's items with other outputs for `changed` (the stub
    judge passes an output that contains the reference: these now fail)."""
    records = [
        item_record(
            f"i{i:02}",
            input=f"q{i}",
            output=f"rewritten {i}" if i in changed else f"answer {i}",
            reference=f"answer {i}" if i % 2 == 0 else "other",
        )
        for i in range(10)
    ]
    import_items(project, write_jsonl(tmp_path / name, records))


def test_a_rerun_asks_only_about_the_changed_items(project, tmp_path, server):
    labelled_project(project, tmp_path, n=10)
    judge(project, server.url)
    first = _run(project)
    assert (first.done, len(server.requests)) == (10, 10)

    _changed_outputs(project, tmp_path, changed={0, 2, 5})
    second = _run(project)
    asked = [sent_data(r["json"]) for r in server.requests[10:]]
    assert sorted(a["output"] for a in asked) == ["rewritten 0", "rewritten 2", "rewritten 5"]
    assert (second.done, second.reused, second.planned) == (3, 7, 10)
    calls = Call.objects.filter(run=second)
    assert set(calls.values_list("revision", flat=True)) == {2}
    third = _run(project)  # nothing changed since: nothing to ask
    assert (third.done, len(server.requests)) == (0, 13)


def test_a_reruns_new_fail_counts_and_the_old_pass_stays_stale(project, tmp_path, server):
    labelled_project(project, tmp_path, n=10)
    version = judge(project, server.url).version
    _run(project)
    assert Verdict.objects.get(item__external_id="i00").label == "pass"

    _changed_outputs(project, tmp_path, changed={0})
    _run(project)
    verdicts = Verdict.objects.filter(item__external_id="i00", judge=version.judge)
    assert list(verdicts.order_by("revision").values_list("revision", "label")) == [
        (1, "pass"),
        (2, "fail"),
    ]
    assert Verdict.objects.current().get(item__external_id="i00").label == "fail"
    import_items(
        project, write_jsonl(tmp_path / "relabel.jsonl", [human_record("i00", "rita", "fail")])
    )
    row = row_for(report_json(project, "--split", "all"), "faithful", "openai-compatible/stub")
    assert (row["n"], row["stale_verdicts"], row["stale_labels"]) == (10, 1, 1)
    assert row["label_counts"]["judge"] == {"pass": 4, "fail": 6}
    assert row["observed_agreement"]["value"] == 1.0


def test_content_changed_back_is_asked_again(project, tmp_path, server):
    """Revision 3 has revision 1's content: its verdict must be on revision 3, so the call is
    made again (the fingerprint names the revision from the second one on)."""
    labelled_project(project, tmp_path, n=10)
    judge(project, server.url)
    _run(project)
    _changed_outputs(project, tmp_path, changed={3}, name="v2.jsonl")
    _run(project)
    _changed_outputs(project, tmp_path, changed=set(), name="v3.jsonl")
    _run(project)
    item = Item.objects.get(external_id="i03")
    assert item.revision == 3 and len(server.requests) == 12
    assert Verdict.objects.current().filter(item=item).count() == 1


def test_an_agreement_report_in_json_names_the_new_keys(project, tmp_path):
    _judged_and_labelled(project, tmp_path, n=4)
    report = report_json(project, "--split", "all")
    assert {"stale_verdicts", "stale_labels"} <= set(report["results"][0])
    json.dumps(report)


def test_item_page_and_dashboard_mark_what_was_given_on_an_earlier_output(
    client, project, tmp_path
):
    _judged_and_labelled(project, tmp_path, n=4)
    import_items(project, write_jsonl(tmp_path / "v2.jsonl", _items(4, changed={1})))
    dashboard_refresh(project=project)
    see_held_out(client, member(project, Role.ADMIN), project)

    item = Item.objects.get(external_id="i01")
    page = client.get(reverse("dashboard_item", args=[project.slug, item.pk])).content.decode()
    assert "given on an earlier output" in page and 'data-stale="1 1"' in page
    assert "human label by rita: <strong>fail</strong>" in page
    assert "-answer 1" in page and "+new answer 1" in page  # the diff of the two outputs
    unchanged = Item.objects.get(external_id="i00")
    other = client.get(reverse("dashboard_item", args=[project.slug, unchanged.pk]))
    assert "given on an earlier output" not in other.content.decode()

    board = client.get(reverse("project_dashboard", args=[project.slug])).content.decode()
    assert 'data-stale-verdicts="1" data-stale-labels="1"' in board


def test_a_changed_items_criterion_question_is_asked_again_of_its_rater(client, project, tmp_path):
    project.overlap = 1
    project.save(update_fields=["overlap"])
    records = [criterion_record(), *_items(2)]
    path = write_jsonl(tmp_path / "v1.jsonl", records)
    import_items(project, path, "--questions", "criterion:faithful")
    rater = member(project, Role.RATER, username="rita")
    item = Item.objects.get(external_id="i01")
    first = rate(rater, item, {"faithful": AnswerInput(Decision.LABEL, "pass")})
    criterion = Criterion.objects.get(project=project)
    assert final_labels(criterion=criterion).labels == {item.pk: "pass"}

    import_items(project, write_jsonl(tmp_path / "v2.jsonl", _items(2, changed={1})))
    item.refresh_from_db()
    question = item.questions.get(key="faithful")
    assert (item.status, question.status) == (ItemStatus.OPEN, QuestionStatus.OPEN)
    assert question.reason == QuestionReason.CONTENT_CHANGED
    assert Event.objects.get(item=item, kind="updated").data["asked_again"] == ["faithful"]
    assert final_labels(criterion=criterion).labels == {}  # the old resolution is stale
    assert stale_label_items(criterion=criterion, items=Item.objects.all()) == {item.pk}
    first.refresh_from_db()
    assert first.status == AssignmentStatus.ASSIGNED  # given back to the rater

    claim = assignment_claim_next(rater=rater, project=project)
    assert claim is not None and claim.item_id == item.pk
    (view,) = rater_workspace(rater=rater, item=item, blind=True, pairwise_orders={})
    assert view.my_answer is None and view.earlier.value == "pass" and view.seq == 1
    client.force_login(rater)
    page = client.get(reverse("review_item", args=[project.slug, item.pk])).content.decode()
    assert "Asked again: the output changed" in page
    assert "Your answer on the earlier output: pass" in page
    with pytest.raises(AnswerError, match="missing: faithful"):
        rate(rater, item, {}, assignment=claim)  # the answer on the old output is not enough
    rate(rater, item, {"faithful": AnswerInput(Decision.LABEL, "fail")}, assignment=claim)
    question.refresh_from_db()
    assert question.status == QuestionStatus.RESOLVED
    assert final_labels(criterion=criterion).labels == {item.pk: "fail"}
    assert list(question.answers.order_by("seq").values_list("revision", "value")) == [
        (1, "pass"),
        (2, "fail"),
    ]
    assert list(question.resolutions.order_by("pk").values_list("revision", flat=True)) == [1, 2]


TEXTFLOW = Path(__file__).parent.parent / "data" / "examples" / "textflow-evaluated.json"


def test_a_textflow_reimport_with_a_changed_response_exports_only_the_new_decisions(
    project, tmp_path
):
    call_command("import_items", "--project", project.slug, str(TEXTFLOW), stdout=StringIO())
    changed = json.loads(TEXTFLOW.read_text())
    changed["0"] |= {
        "response": "Repot it at once.",
        "decision1": "Incorrect",
        "decision2": "Incorrect",
        "decision3": "Incorrect",
        "final_decision": "Incorrect",
    }
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(changed))
    call_command("import_items", "--project", project.slug, str(path), stdout=StringIO())
    item = Item.objects.get(external_id="wiki90012/1")
    assert item.revision == 2 and Verdict.objects.filter(item=item).count() == 6
    out = tmp_path / "out.json"
    call_command("export_textflow", "--project", project.slug, "--out", str(out))
    exported = json.loads(out.read_text())["0"]
    assert exported["response"] == "Repot it at once."
    assert [exported[f"decision{n}"] for n in (1, 2, 3)] == ["Incorrect"] * 3
    assert "decision4" not in exported


def test_a_field_answer_given_before_the_content_changed_still_counts(
    project, tmp_path, review_item
):
    """Only criterion and pairwise questions are asked again: a field question's answer is
    about the evidence and stays an answer."""
    project.overlap = 1
    project.save(update_fields=["overlap"])
    item = review_item(project, {"$.total": ["1", "2"]}, criteria={"tone": ["good", "bad"]})
    rater = member(project, Role.RATER, username="rita")
    claim = rate(rater, item, {"$.total": "1"}, submit=False)
    record = item_record(item.external_id, output="changed")
    import_items(project, write_jsonl(tmp_path / "v2.jsonl", [record]))
    item.refresh_from_db()
    assert item.revision == 2
    rate(rater, item, {"tone": AnswerInput(Decision.LABEL, "good")}, assignment=claim)
    total = item.questions.get(key="$.total")
    assert total.status == QuestionStatus.RESOLVED and total.resolutions.get().value == "1"
    assert item.questions.get(key="tone").status == QuestionStatus.RESOLVED


def test_the_latest_verdict_on_the_same_revision_wins(project, tmp_path, server):
    """A run's reply for a sample that the same judge configuration already has on the same
    revision (here an imported one) replaces it; the replaced label is kept in `extra`."""
    labelled_project(project, tmp_path, n=4)
    version = judge(project, server.url, samples=2).version
    row = version.judge
    given = {
        "provider": row.provider,
        "model": row.model,
        "temperature": row.temperature,
        "prompt_sha256": row.prompt_sha256,
    }
    imported = [verdict_record("i01", "pass", judge=given)]  # the stub says fail on i01
    import_items(project, write_jsonl(tmp_path / "imported.jsonl", imported))
    _run(project)
    verdict = Verdict.objects.get(item__external_id="i01", judge=row, sample=0)
    assert (verdict.revision, verdict.label) == (1, "fail")
    assert verdict.extra["replaced"]["label"] == "pass"
    assert Verdict.objects.filter(item__external_id="i01", judge=row).count() == 2
