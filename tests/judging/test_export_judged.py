"""TextFlow export of Evalsite's own judge runs: each sample's label a decisionN, the majority
the final decision; importing the file into a new project gives the same labels and pass rate,
with nothing unparsed."""

import json
import threading
from collections import Counter
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging.models import Verdict
from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute
from reviews.models import Item, Project
from tests.judging.helpers import import_items
from tests.judging.run_helpers import judge, labelled_project
from tests.judging.wire_server import Say, WireServer

pytestmark = pytest.mark.django_db


class Votes:
    """Replies cycling pass, pass, fail, ... so that samples of one item disagree."""

    def __init__(self):
        self.lock, self.count = threading.Lock(), 0

    def __call__(self, request):
        with self.lock:
            self.count += 1
            label = "fail" if self.count % 3 == 0 or self.count % 7 == 0 else "pass"
        return Say(json.dumps({"label": label, "explanation": "because"}))


def run_version(project, url, name="j", **fields):
    config = judge(project, url, name=name, samples=3, **fields).config
    run = run_create(config=config, split="all", confirm_held_out=True, concurrency=2)
    return run_execute(run)


def export(project, tmp_path, *args) -> dict:
    out = tmp_path / "export.json"
    call_command("export_textflow", "--project", project.slug, "--out", str(out), *args,
                 stdout=StringIO())  # fmt: skip
    return out


def labels_by_item(project) -> dict[str, list[str]]:
    """{item's external id before the "/": labels by sample} of the project's judge."""
    labels: dict[str, list[str]] = {}
    rows = Verdict.objects.filter(item__project=project).order_by("item__external_id", "sample")
    for external_id, label in rows.values_list("item__external_id", "label"):
        labels.setdefault(external_id.split("/")[0], []).append(label)
    return labels


def pass_rate(labels: dict[str, list[str]]) -> float:
    majorities = [Counter(v).most_common(1)[0][0] for v in labels.values()]
    return majorities.count("pass") / len(majorities)


def test_a_run_round_trips_with_the_same_labels_and_pass_rate(project, tmp_path):
    labelled_project(project, tmp_path, n=30)
    with WireServer("openai-compatible", answer=Votes()) as server:
        run = run_version(project, server.url)
    assert run.done == 90 and run.unparsed == 0
    out = export(project, tmp_path)
    exported = json.loads(out.read_text())
    first = exported["0"]
    item = Item.objects.get(project=project, external_id=first["key"])
    assert (first["question"], first["response"]) == (item.input, item.output)
    assert {first["decision1"], first["decision2"], first["decision3"]} <= {"pass", "fail"}
    assert (
        first["final_decision"]
        == Counter([first["decision1"], first["decision2"], first["decision3"]]).most_common(1)[0][
            0
        ]
    )
    assert first["evalsite"]["judge"] == "openai-compatible/stub"
    assert first["human_label"] in ("pass", "fail")  # the people's labels go along

    copy = Project.objects.create(slug="copy", name="Copy")
    report = import_items(copy, out)
    original, imported = labels_by_item(project), labels_by_item(copy)
    assert imported == original and len(imported) == 30
    assert not Verdict.objects.filter(item__project=copy, label="unparsed").exists()
    rate = pass_rate(original)
    assert 0 < rate < 1 and pass_rate(imported) == rate
    assert f"= {rate:.3f}" in report  # the import's note says the same pass rate
    [judge_row] = {
        (v.judge.provider, v.judge.model) for v in Verdict.objects.filter(item__project=copy)
    }
    assert judge_row == ("openai-compatible", "stub")


def test_one_sample_per_item_and_json_outputs_are_written_as_text(project, tmp_path):
    labelled_project(project, tmp_path, n=2)
    Item.objects.filter(project=project, external_id="i00").update(output={"answer": 0})
    with WireServer("openai-compatible", answer=Votes()) as server:
        config = judge(project, server.url).config
        run_execute(run_create(config=config, split="all", confirm_held_out=True))
    exported = json.loads(export(project, tmp_path).read_text())
    assert exported["0"]["response"] == '{"answer": 0}'
    assert "decision2" not in exported["0"]
    assert exported["0"]["final_decision"] == exported["0"]["decision1"]
    copy = Project.objects.create(slug="copy", name="Copy")
    import_items(copy, export(project, tmp_path))
    assert labels_by_item(copy) == labels_by_item(project)


def test_several_judges_need_one_chosen_by_name_and_version(project, tmp_path):
    labelled_project(project, tmp_path, n=4)
    with WireServer("openai-compatible", answer=Votes()) as server:
        run_version(project, server.url, name="a")
        run_version(project, server.url, name="b", model="other")
    with pytest.raises(CommandError, match=r"several judges have verdicts \(a@1, b@1\)"):
        export(project, tmp_path)
    with pytest.raises(CommandError, match="write it as NAME@VERSION"):
        export(project, tmp_path, "--judge", "b")
    with pytest.raises(CommandError, match="no judge version 'b@2'"):
        export(project, tmp_path, "--judge", "b@2")
    exported = json.loads(export(project, tmp_path, "--judge", "b@1").read_text())
    assert {r["evalsite"]["judge"] for r in exported.values()} == {"openai-compatible/other"}
    assert len(exported) == 4


def test_an_evalsite_block_that_differs_between_records_is_refused(project, tmp_path):
    labelled_project(project, tmp_path, n=2)
    with WireServer("openai-compatible", answer=Votes()) as server:
        run_version(project, server.url)
    out = export(project, tmp_path)
    data = json.loads(out.read_text())
    copy = Project.objects.create(slug="copy", name="Copy")
    other_judge = {
        "0": data["0"],
        "1": data["1"] | {"evalsite": data["1"]["evalsite"] | {"judge": "openai/gpt-4o"}},
    }
    gap = {"0": data["0"] | {"decision5": "pass"}}
    for bad, where in ((other_judge, 'key "1", $.evalsite'), (gap, 'key "0", $.decision4')):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        err = StringIO()
        with pytest.raises(CommandError):
            call_command(
                "import_items", "--project", "copy", str(path), stdout=StringIO(), stderr=err
            )
        assert where in err.getvalue(), err.getvalue()
    assert not Item.objects.filter(project=copy).exists()


def test_the_imported_copy_exports_the_same_file_again(project, tmp_path):
    """A project that imported Evalsite's export writes that file back, decisions and evalsite
    block included: a second round trip loses no verdict."""
    labelled_project(project, tmp_path, n=6)
    with WireServer("openai-compatible", answer=Votes()) as server:
        run_version(project, server.url)
    first = json.loads(export(project, tmp_path).read_text())
    copy = Project.objects.create(slug="copy", name="Copy")
    import_items(copy, export(project, tmp_path))
    again = json.loads(export(copy, tmp_path).read_text())
    assert again == first
