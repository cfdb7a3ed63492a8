"""Score pages: upload, run page, access rules."""

import io
import json

import pytest
from django.urls import reverse

from judging.models import ScoreRun
from reviews.models import Role
from tests.factories import member
from tests.helpers import bearer
from tests.judging.helpers import INVOICE_ROWS, invoice_predictions, referenced_item

pytestmark = pytest.mark.django_db


def upload(client, project, records, **data):
    body = "".join(json.dumps(r) + "\n" for r in records).encode()
    file = io.BytesIO(body)
    file.name = "preds.jsonl"
    return client.post(reverse("score_upload", args=[project.slug]), {"predictions": file, **data})


def test_admin_uploads_and_reads_the_run(client, project):
    referenced_item(project, "inv-1", INVOICE_ROWS)
    client.force_login(member(project, Role.ADMIN))
    response = upload(client, project, invoice_predictions())
    run = ScoreRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("score_run", args=[project.slug, run.pk])
    page = client.get(response["Location"]).content.decode()
    assert "Accuracy against approved ground truth" in page
    assert 'data-path="$.invoice.lines[1].amount"' in page
    assert "upstream_or_combined" in page
    assert '<svg class="pipeline-graph"' in page
    assert "declared: <code>$.total</code>" in page
    filtered = client.get(
        response["Location"], {"stage": "total", "context": "upstream_or_combined"}
    )
    assert filtered.status_code == 200
    assert filtered.context["sections"][0]["shown_cases"][0]["stage_id"] == "total"


def test_a_file_without_stages_has_a_headline_and_no_stage_wording(client, project):
    referenced_item(project, "inv-1", INVOICE_ROWS)
    client.force_login(member(project, Role.ADMIN))
    record = {
        "case_id": "inv-1",
        "producer": {"provider": "acme", "model": "extractor"},
        "prediction": {"invoice": {"number": "X-0"}},
    }
    response = upload(client, project, [record])
    page = client.get(response["Location"]).content.decode()
    assert 'data-producer="acme/extractor"' in page
    assert "wholly correct" in page
    for stage_words in ("Stage", "failure context", "Failure context", "current_stage"):
        assert stage_words not in page, stage_words


def test_bad_file_is_named_and_nothing_is_stored(client, project):
    client.force_login(member(project, Role.ADMIN))
    response = upload(client, project, [{"case_id": "nope", "prediction": {}}])
    assert response.status_code == 200
    assert "preds.jsonl, line 1, $.case_id: no item &#x27;nope&#x27;" in response.content.decode()
    assert not ScoreRun.objects.exists()


def test_provisional_section_is_labelled(client, project):
    referenced_item(project, "inv-1", INVOICE_ROWS, authority="generated")
    client.force_login(member(project, Role.ADMIN))
    response = upload(client, project, invoice_predictions(), allow_generated="on")
    page = client.get(response["Location"]).content.decode()
    assert "Agreement with a provisional AI reference" in page
    assert "Accuracy against approved ground truth" in page  # its own, empty section


def test_roles(client, project, outsider):
    referenced_item(project, "inv-1", INVOICE_ROWS)
    admin = member(project, Role.ADMIN)
    client.force_login(admin)
    upload(client, project, invoice_predictions())
    run = ScoreRun.objects.get()
    run_url = reverse("score_run", args=[project.slug, run.pk])
    list_url = reverse("score_list", args=[project.slug])
    client.force_login(member(project, Role.ADJUDICATOR))
    assert client.get(run_url).status_code == 200
    assert "score-upload" not in client.get(list_url).content.decode()
    assert upload(client, project, invoice_predictions()).status_code == 403
    client.force_login(member(project, Role.RATER))
    assert client.get(run_url).status_code == 403
    client.force_login(outsider)
    assert client.get(run_url).status_code == 404
    assert client.get(list_url).status_code == 404
    assert ScoreRun.objects.count() == 1


def test_api_scores_and_reads_back(client, project):
    referenced_item(project, "inv-1", INVOICE_ROWS)
    admin = member(project, Role.ADMIN)
    url = f"/api/projects/{project.slug}/score-runs"
    body = {"records": invoice_predictions()}
    response = client.post(
        url, json.dumps(body), content_type="application/json", headers=bearer(admin)
    )
    assert response.status_code == 201, response.content
    created = response.json()
    stages = {c["stage_id"]: c for c in created["report"]["sections"][0]["cases"]}
    assert stages["total"]["failure_context"] == "upstream_or_combined"
    assert stages["total"]["record"] == "record 2"
    read = client.get(f"{url}/{created['id']}", headers=bearer(admin))
    assert read.status_code == 200 and read.json()["report"] == created["report"]


def test_api_provisional_figures_are_labelled_apart(client, project):
    referenced_item(project, "inv-1", INVOICE_ROWS)
    referenced_item(project, "inv-2", INVOICE_ROWS, authority="generated")
    body = {
        "records": invoice_predictions("inv-1") + invoice_predictions("inv-2"),
        "allow_generated": True,
    }
    response = client.post(
        f"/api/projects/{project.slug}/score-runs",
        json.dumps(body),
        content_type="application/json",
        headers=bearer(member(project, Role.ADMIN)),
    )
    assert response.status_code == 201, response.content
    truth, provisional = response.json()["report"]["sections"]
    assert (truth["label"], truth["measure"]) == (
        "accuracy against approved ground truth",
        "accuracy",
    )
    assert {c["case_id"] for c in truth["cases"]} == {"inv-1"}
    assert provisional["label"] == "agreement with a provisional AI reference"
    assert {c["case_id"] for c in provisional["cases"]} == {"inv-2"}
    assert "accuracy" not in json.dumps(provisional)


def test_api_bad_record_is_named_and_nothing_is_stored(client, project):
    admin = member(project, Role.ADMIN)
    body = {"records": [{"case_id": "x", "prediction": {}}, {"case_id": "y"}]}
    response = client.post(
        f"/api/projects/{project.slug}/score-runs",
        json.dumps(body),
        content_type="application/json",
        headers=bearer(admin),
    )
    assert response.status_code == 422
    assert response.json()["error"] == {
        "reason": "Field required",
        "file": "API request",
        "record": "record 2",
        "path": "$.prediction",
    }
    assert not ScoreRun.objects.exists()


@pytest.mark.parametrize("seed", [-1, 2**63])
def test_api_seed_out_of_range_is_named_and_nothing_is_stored(client, project, seed):
    referenced_item(project, "inv-1", INVOICE_ROWS)
    response = client.post(
        f"/api/projects/{project.slug}/score-runs",
        json.dumps({"records": invoice_predictions(), "seed": seed}),
        content_type="application/json",
        headers=bearer(member(project, Role.ADMIN)),
    )
    assert response.status_code == 422
    assert response.json()["error"]["path"] == "$.seed"
    assert not ScoreRun.objects.exists()


def test_api_roles(client, project, outsider):
    url = f"/api/projects/{project.slug}/score-runs"
    body = json.dumps({"records": []})
    rater = member(project, Role.RATER)
    assert (
        client.post(url, body, content_type="application/json", headers=bearer(rater)).status_code
        == 403
    )
    assert (
        client.post(
            url, body, content_type="application/json", headers=bearer(outsider)
        ).status_code
        == 404
    )


def test_baseline_page_action(client, project, tmp_path):
    from judging.models import Verdict
    from tests.judging.helpers import criterion_record, import_items, item_record, write_jsonl

    records = [
        criterion_record(name="correct"),
        item_record("a", output="Paris", reference="paris"),
    ]
    import_items(project, write_jsonl(tmp_path / "r.jsonl", records))
    client.force_login(member(project, Role.ADMIN))
    url = reverse("baseline_start", args=[project.slug])
    data = {"criterion": "correct", "baseline": "normalised", "threshold": 0.5, "rel_tol": 0}
    response = client.post(url, {**data, "rouge_type": "rougeL", "split": "all"}, follow=True)
    assert "baseline/normalised: 1 verdicts written (1 passed)" in response.content.decode()
    assert Verdict.objects.get().label == "pass"
    bad = client.post(url, {**data, "threshold": 3, "rouge_type": "rougeL", "split": "all"})
    assert bad.status_code == 200 and bad.context["baseline_form"].errors["threshold"]
    client.force_login(member(project, Role.ADJUDICATOR))
    assert client.post(url, data).status_code == 403


def test_baseline_form_offers_only_pass_fail_criteria(client, project, tmp_path):
    """An ordinal or pairwise criterion cannot take a baseline: it is not offered (it was the
    default choice, refused on submit)."""
    from tests.judging.helpers import criterion_record, import_items, write_jsonl

    records = [
        criterion_record(name="clarity", labels=["1", "2", "3"], positive=None, ordinal=True),
        criterion_record(name="correct"),
    ]
    import_items(project, write_jsonl(tmp_path / "r.jsonl", records))
    client.force_login(member(project, Role.ADMIN))
    form = client.get(reverse("score_list", args=[project.slug])).context["baseline_form"]
    assert form.fields["criterion"].choices == [("correct", "correct")]


@pytest.mark.parametrize(
    ("query", "stage", "context"),
    [
        ({}, None, None),
        ({"stage": "total", "context": "upstream_or_combined"}, "total", "upstream_or_combined"),
        ({"stage": "", "context": "no-such-context"}, "", None),  # an unknown context: ignored
    ],
)
def test_the_run_pages_filters_parse_through_their_form(client, project, query, stage, context):
    referenced_item(project, "inv-1", INVOICE_ROWS)
    client.force_login(member(project, Role.ADMIN))
    upload(client, project, invoice_predictions())
    run = ScoreRun.objects.get()
    page = client.get(reverse("score_run", args=[project.slug, run.pk]), query)
    assert page.status_code == 200
    assert (page.context["stage"], page.context["context"]) == (stage, context)
    case = client.get(reverse("score_case", args=[project.slug, run.pk]), {"case": "x" * 600})
    assert case.status_code == 200 and case.context["case_id"] == ""  # too long: no case
