"""Label Studio exports made by Label Studio itself (tests/data/label_studio, written by
`python -m bench._label_studio_fixtures`): items, criteria, human labels, verdicts, the agreement
report against scikit-learn, refusals that name task and field, and a .zip with its media."""

import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from judging.models import Criterion, HumanLabel, Judge, Verdict
from reviews.models import Document, Item, ItemSource, Role
from reviews.services.imports.pipeline import detect
from reviews.services.projects.tokens import token_create
from tests.factories import member
from tests.helpers import row_counts
from tests.judging.helpers import import_items, report_json

pytestmark = pytest.mark.django_db
DATA = Path(__file__).resolve().parent.parent / "data" / "label_studio"
EXPORT = DATA / "text_export.json"
CONFIG = DATA / "text_label_config.xml"
TASKS = json.loads(EXPORT.read_text())


def _rows(rater: str, criterion: str) -> dict[int, str]:
    """Task id -> the label the export gives, read straight from the file."""
    out = {}
    for task in TASKS:
        for annotation in task["annotations"]:
            if annotation["completed_by"]["email"] != rater or annotation["was_cancelled"]:
                continue
            for region in annotation["result"]:
                if region["from_name"] == criterion:
                    value = region["value"]
                    out[task["id"]] = str(value.get("rating") or (value.get("choices") or [""])[0])
    return out


def test_the_export_is_detected_as_label_studio():
    head = EXPORT.read_bytes()[:65536]
    assert detect("export.json", head) == "label-studio"
    assert detect("min.json", (DATA / "text_export_min.json").read_bytes()) == "label-studio"
    # A first task whose annotations fill the whole head, its id after them.
    long = {"annotations": [{"result": [], "note": "x" * 70_000}], "id": 1, "data": {}}
    assert detect("big.json", json.dumps([long]).encode()[:65536]) == "label-studio"


def test_tasks_annotations_and_predictions_become_items_labels_and_verdicts(project):
    out = import_items(project, EXPORT, "--label-config", str(CONFIG), "--map", "output=answer",
                       "--map", "reference=reference", "--map", "input=question")  # fmt: skip
    assert Item.objects.filter(project=project).count() == 6
    item = Item.objects.get(project=project, external_id="label-studio-2")
    assert (item.input, item.output, item.expected) == ("Capital of France?", "Lyon", "Paris")
    assert item.metadata["label_studio"]["task_id"] == 2
    criteria = {c.name: c for c in Criterion.objects.filter(project=project)}
    assert criteria["correct"].labels == ["pass", "fail"]
    assert criteria["quality"].labels == ["1", "2", "3", "4", "5"] and criteria["quality"].ordinal
    assert criteria["comment"].labels == ["exact", "wrong city"]
    # Ana 10 (4 tasks), Ben 9 (4 tasks); the skipped and the empty annotation give none.
    assert set(HumanLabel.objects.values_list("rater", flat=True)) == {
        "ana@example.com",
        "ben@example.com",
    }
    expected_labels = sum(
        len([r for r in a["result"] if r["type"] in ("choices", "rating", "textarea")])
        for t in TASKS
        for a in t["annotations"]
        if not a["was_cancelled"]
    )
    assert HumanLabel.objects.count() == expected_labels == 19
    two = HumanLabel.objects.filter(item=item, criterion=criteria["correct"])
    assert sorted(two.values_list("rater", "label")) == [
        ("ana@example.com", "fail"),
        ("ben@example.com", "fail"),
    ]
    (judge,) = Judge.objects.filter(project=project)
    assert (judge.provider, judge.model) == ("label-studio", "qa-v1")
    assert Verdict.objects.filter(criterion=criteria["correct"]).count() == 6
    verdict = Verdict.objects.get(item=item, criterion=criteria["correct"])
    assert (verdict.label, verdict.confidence) == ("fail", pytest.approx(0.81))
    assert "cancelled (skipped) annotations: not labels" not in out  # words are the page's
    assert "annotators (ana@example.com, ben@example.com)" in out
    assert "19 human labels" in out and "7 verdicts" in out
    assert "not labels: 1 cancelled (skipped) and 1 empty annotations" in out


def test_cancelled_and_empty_annotations_are_counted(project):
    from reviews.services.imports.pipeline import file_import

    report = file_import(actor=None, project=project, path=EXPORT, options={})
    assert report.counts["cancelled_annotations"] == 1
    assert report.counts["empty_annotations"] == 1
    assert report.format == "label-studio"
    assert any("warning: no label config" in note for note in report.notes)
    # Labels seen: Ratings 1 to the highest seen, choices sorted.
    assert Criterion.objects.get(name="quality").labels == ["1", "2", "3", "4", "5"]
    assert Criterion.objects.get(name="correct").labels == ["fail", "pass"]


def test_reimporting_the_same_export_changes_nothing(project):
    import_items(project, EXPORT, "--label-config", str(CONFIG))
    before = row_counts()
    out = import_items(project, EXPORT, "--label-config", str(CONFIG))
    assert row_counts() == before
    assert "6 unchanged" in out


@pytest.mark.parametrize(("criterion", "kappa"), [("correct", 0.5), ("quality", 1 / 13)])
def test_kappa_between_the_two_annotators_is_scikit_learns(project, criterion, kappa):
    import_items(project, EXPORT, "--label-config", str(CONFIG))
    report = report_json(project, "--criterion", criterion, "--split", "all")
    (pair,) = [e for e in report["human_human"] if e["kind"] == "rater_pair"]
    assert pair["raters"] == ["ana@example.com", "ben@example.com"]
    ana, ben = _rows("ana@example.com", criterion), _rows("ben@example.com", criterion)
    both = sorted(ana.keys() & ben.keys())
    assert pair["n"] == len(both) == 4
    expected = cohen_kappa_score([ana[t] for t in both], [ben[t] for t in both])
    assert pair["cohen_kappa"]["value"] == pytest.approx(expected)
    assert expected == pytest.approx(kappa)


def test_the_quick_export_names_annotators_by_id_and_predictions_by_id(project):
    out = import_items(project, DATA / "text_export_quick.json", "--label-config", str(CONFIG))
    assert set(HumanLabel.objects.values_list("rater", flat=True)) == {
        "label-studio user 1",
        "label-studio user 2",
    }
    assert Verdict.objects.count() == 0
    assert "6 predictions are only ids" in out


def test_json_min_is_refused_with_what_to_export(project):
    with pytest.raises(CommandError, match="nothing was written"):
        import_items(project, DATA / "text_export_min.json")
    assert Item.objects.count() == 0


def _refused(project, path, *args) -> str:
    from io import StringIO

    from django.core.management import call_command

    err = StringIO()
    before = row_counts()
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_items", "--project", project.slug, str(path), *args, stderr=err)
    assert row_counts() == before
    return err.getvalue()


def test_a_malformed_export_is_refused_naming_task_and_field(project):
    message = _refused(project, DATA / "malformed.json")
    assert (
        "malformed.json, task 3, $.annotations[0].result[1].value.rating: a rating must be a "
        "whole number" in message
    )


def test_a_label_outside_the_config_is_refused_naming_task_and_field(tmp_path, project):
    config = tmp_path / "config.xml"
    config.write_text(CONFIG.read_text().replace('<Choice value="fail"/>', ""))
    message = _refused(project, EXPORT, "--label-config", str(config))
    assert "task 2, $.annotations[0].result[0].value.choices: label 'fail'" in message


def test_a_map_to_a_missing_data_field_is_refused(project):
    message = _refused(project, EXPORT, "--map", "output=response")
    assert "task 1, $.data.response: no data field 'response'" in message


def test_a_zip_with_local_images_makes_them_evidence(project):
    out = import_items(project, DATA / "image_export.zip")  # detected by its export's head
    items = Item.objects.filter(project=project).order_by("external_id")
    assert items.count() == 3
    sources = ItemSource.objects.filter(item__project=project)
    assert sources.count() == 2
    assert {s.artifact_id for s in sources} == {"image"}
    assert {s.document.kind for s in sources} == {"image"}
    by_url = [i for i in items if "links" in i.metadata["label_studio"]]
    assert [i.metadata["label_studio"]["links"]["image"] for i in by_url] == [
        "https://images.example.org/scans/scan-green.png"
    ]
    assert Criterion.objects.get(name="legible").labels == ["yes", "no"]  # the zip's .xml
    assert HumanLabel.objects.count() == 3
    assert Document.objects.count() == 2
    assert "imported 3 items" in out


def test_a_zip_missing_a_shipped_file_is_refused(tmp_path, project):
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(DATA / "image_export.zip") as source, zipfile.ZipFile(broken, "w") as zf:
        for info in source.infolist():
            if not info.filename.endswith("scan-red.png"):
                zf.writestr(info, source.read(info))
    message = _refused(project, broken, "--format", "label-studio")
    assert "task" in message and "$.data.image" in message and "not in the .zip" in message


def test_the_json_export_alone_keeps_storage_paths_as_links(tmp_path, project):
    with zipfile.ZipFile(DATA / "image_export.zip") as zf:
        (tmp_path / "export.json").write_bytes(zf.read("export.json"))
    out = import_items(project, tmp_path / "export.json")
    assert ItemSource.objects.count() == 0
    assert "2 media paths point into Label Studio's storage" in out


def test_the_api_imports_an_export_with_its_label_config(client, project):
    _, secret = token_create(actor=member(project, Role.ADMIN), name="pipeline")
    response = client.post(
        f"/api/projects/{project.slug}/imports",
        {
            "file": SimpleUploadedFile("text_export.json", EXPORT.read_bytes()),
            "label_config": CONFIG.read_text(),
        },
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["format"] == "label-studio" and body["counts"]["items_created"] == 6
    assert body["counts"]["cancelled_annotations"] == 1
    assert Criterion.objects.get(name="correct").labels == ["pass", "fail"]  # the config's order


def test_the_upload_page_imports_a_zipped_project(
    client, project, django_capture_on_commit_callbacks
):
    client.force_login(member(project, Role.ADMIN))
    upload = SimpleUploadedFile("scans.zip", (DATA / "image_export.zip").read_bytes())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("import_upload", args=[project.slug]), {"file": upload})
    assert response.status_code == 302
    page = client.get(response.url).content.decode()
    assert "imported 3 items, 0 questions, 3 human labels, 1 criterion, 0 errors" in page
    assert "Evidence files stored" in page or "evidence files stored" in page
    assert ItemSource.objects.filter(item__project=project).count() == 2


def test_the_upload_page_takes_the_label_config(
    client, project, django_capture_on_commit_callbacks
):
    client.force_login(member(project, Role.ADMIN))
    files = {
        "file": SimpleUploadedFile("text_export.json", EXPORT.read_bytes()),
        "label_config": SimpleUploadedFile("config.xml", CONFIG.read_bytes()),
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("import_upload", args=[project.slug]), files)
    assert response.status_code == 302
    assert Criterion.objects.get(name="correct").labels == ["pass", "fail"]  # the config's order
    page = client.get(response.url).content.decode()
    assert "<td>Cancelled (skipped) annotations: not labels</td>" in page
    assert "<td>Empty annotations: not labels</td>" in page
    assert "warning: no label config" not in page


def test_an_annotation_of_a_deleted_user_is_its_own_rater(tmp_path, project):
    tasks = json.loads(EXPORT.read_text())
    for annotation in tasks[0]["annotations"]:
        annotation["completed_by"] = None
    (tmp_path / "export.json").write_text(json.dumps(tasks))
    import_items(project, tmp_path / "export.json", "--label-config", str(CONFIG))
    raters = set(HumanLabel.objects.filter(item__external_id="label-studio-1").values_list(
        "rater", flat=True))  # fmt: skip
    ids = [a["id"] for a in tasks[0]["annotations"]]
    assert raters == {f"label-studio annotation {i} (annotator deleted)" for i in ids}


def test_the_upload_page_says_it_reads_label_studio_exports(client, project):
    client.force_login(member(project, Role.ADMIN))
    page = client.get(reverse("import_upload", args=[project.slug])).content.decode()
    intro = page.split("<h1>Import</h1>", 1)[1].split("</p>", 1)[0]
    assert "a Label Studio project's JSON export" in intro
