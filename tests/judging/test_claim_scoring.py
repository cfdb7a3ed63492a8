"""Semantic scoring with a claim judge, against a local server speaking each provider's wire
format: the decisions, the four claim measures, reuse by fingerprint, cost, a malformed reply
(undecidable, never a crash), and `exact`/`auto` without a judge."""

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging.models import Call, CallStatus, Run
from tests.judging.helpers import referenced_item, write_jsonl
from tests.judging.run_helpers import judge
from tests.judging.wire_server import Say, WireServer

pytestmark = pytest.mark.django_db

SUMMARY = "The invoice is from Northwind. It totals 798.60 EUR. Payment is due in March."
ROWS = {"$.summary": SUMMARY, "$.total": "798.60"}
PREDICTION = {"summary": "Northwind sent the invoice. It totals 789.60 EUR.", "total": "798.60"}
DECISIONS = {
    "predicted": [
        {"id": "p1", "decision": "supported", "explanation": "same sender"},
        {"id": "p2", "decision": "contradicted", "explanation": "789.60 is not 798.60"},
    ],
    "reference": [
        {"id": "r1", "decision": "matched", "explanation": ""},
        {"id": "r2", "decision": "missed", "explanation": "the total differs"},
        {"id": "r3", "decision": "undecidable", "explanation": "no due date either way"},
    ],
}
PROMPT = "You compare claims. {{ instruction }}"


def score(project, tmp_path, *args):
    if not project.items.filter(external_id="inv-1").exists():
        referenced_item(project, "inv-1", ROWS)
    path = write_jsonl(
        tmp_path / "preds.jsonl",
        [{"case_id": "inv-1", "prediction": PREDICTION,
          "producer": {"provider": "openai", "model": "gpt-4o"}}],
    )  # fmt: skip
    out, err = StringIO(), StringIO()
    call_command(
        "score_predictions", "--project", project.slug, str(path), "--format", "json", *args,
        stdout=out, stderr=err,
    )  # fmt: skip
    return json.loads(out.getvalue())


def claim_judge(project, srv, provider):
    judge(project, srv.url, name="claims", provider=provider, model="m", criterion=None,
          prompt=PROMPT)  # fmt: skip


@pytest.mark.parametrize("provider", ["openai", "anthropic", "openai-compatible"])
def test_a_claim_judge_of_each_provider_kind_decides_the_free_text(
    project, tmp_path, provider, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    call_command(
        "model_price", "--provider", provider, "--model", "m", "--input-usd-per-mtok", "1",
        "--output-usd-per-mtok", "2", stdout=StringIO(),
    )  # fmt: skip
    with WireServer(provider, [Say(json.dumps(DECISIONS))]) as srv:
        claim_judge(project, srv, provider)
        report = score(project, tmp_path, "--claim-judge", "claims")
        again = score(project, tmp_path, "--claim-judge", "claims@1")
        assert len(srv.requests) == 1  # the second scoring reused the call by fingerprint
    sent = json.dumps(srv.requests[0]["json"])
    assert "It totals 789.60 EUR." in sent and "Payment is due in March." in sent
    (section,) = report["sections"]
    (case,) = section["cases"]
    assert [f["path"] for f in case["fields"]] == ["$.total"]  # exact: a value
    assert case["fields"][0]["outcome"] == "correct"
    claims = case["claims"]
    assert claims["judge"] == "claims@1"
    assert [(c["id"], c["decision"]) for c in claims["predicted"]] == [
        ("p1", "supported"), ("p2", "contradicted")
    ]  # fmt: skip
    assert claims["reference"][1]["explanation"] == "the total differs"
    assert claims["claim_precision"]["value"] == 0.5
    assert claims["reference_recall"]["value"] == 0.5
    assert claims["claim_verification_coverage"]["value"] == pytest.approx(4 / 5)
    assert claims["f1"]["value"] == 0.5
    assert case["verdict"] == "fail"  # a contradicted claim fails the record
    (producer,) = section["claim_scores"]
    assert producer["producer"] == "openai/gpt-4o" and producer["n_cases"] == 1
    assert producer["claim_precision"]["ci"] == [0.5, 0.5]
    assert again["sections"][0]["cases"][0]["claims"]["counts"] == claims["counts"]
    call = Call.objects.get()
    assert call.status == CallStatus.DONE
    assert call.cost_usd == Decimal(11 * 1 + 7 * 2) / Decimal(1_000_000)
    runs = Run.objects.filter(version__config__name="claims").order_by("pk")
    assert [(r.done, r.reused, r.status) for r in runs] == [(1, 0, "done"), (0, 1, "done")]


@pytest.mark.parametrize(
    "reply",
    [
        "I think it is mostly fine.",
        '{"predicted": [{"id": "p1", "decision": "probably"}], "reference": []}',
        '{"predicted": "all supported"}',
    ],
)
def test_a_malformed_decision_reply_is_undecidable_never_a_crash(project, tmp_path, reply):
    with WireServer("openai-compatible", [Say(reply)]) as srv:
        claim_judge(project, srv, "openai-compatible")
        report = score(project, tmp_path, "--claim-judge", "claims")
    claims = report["sections"][0]["cases"][0]["claims"]
    assert {c["decision"] for c in claims["predicted"] + claims["reference"]} == {"undecidable"}
    assert claims["error"]
    assert claims["predicted"][0]["explanation"].startswith("reply not understood")
    assert claims["claim_verification_coverage"]["value"] == 0.0
    assert claims["claim_precision"]["value"] is None
    assert "no predicted claim could be decided" in claims["claim_precision"]["undefined_reason"]
    assert Call.objects.get().status == CallStatus.UNPARSED


def test_a_decision_left_out_is_undecidable_and_unknown_ids_are_dropped(project, tmp_path):
    partial = {"predicted": [{"id": "p1", "decision": "supported", "explanation": ""},
                             {"id": "p9", "decision": "contradicted", "explanation": ""}],
               "reference": []}  # fmt: skip
    with WireServer("openai-compatible", [Say(json.dumps(partial))]) as srv:
        claim_judge(project, srv, "openai-compatible")
        claims = score(project, tmp_path, "--claim-judge", "claims")["sections"][0]["cases"][0][
            "claims"
        ]
    assert [c["decision"] for c in claims["predicted"]] == ["supported", "undecidable"]
    assert claims["predicted"][1]["explanation"] == "no decision"
    assert claims["claim_precision"]["value"] == 1.0
    assert claims["reference_recall"]["value"] is None


def test_exact_skips_free_text_and_says_so(project, tmp_path):
    report = score(project, tmp_path, "--comparison", "exact")
    case = report["sections"][0]["cases"][0]
    assert report["comparison"] == "exact"
    assert case["skipped"] == [{"path": "$.summary", "reason": "free text: not exact-compatible"}]
    assert case["missing"] == [] and case["claims"] is None
    assert (case["field_accuracy"]["value"], case["verdict"]) == (1.0, "pass")


def test_auto_without_a_claim_judge_leaves_the_claims_undecided_and_says_why(project, tmp_path):
    case = score(project, tmp_path)["sections"][0]["cases"][0]
    assert case["claims"]["error"] == "semantic comparison needs a claim judge (--claim-judge NAME)"
    assert case["claims"]["claim_verification_coverage"]["value"] == 0.0
    assert case["verdict"] == "pass"  # the exact field is right; nothing semantic was decided


def test_semantic_compares_every_row_by_claims(project, tmp_path):
    answer = {"predicted": [], "reference": []}
    with WireServer("openai-compatible", [Say(json.dumps(answer))]) as srv:
        claim_judge(project, srv, "openai-compatible")
        case = score(project, tmp_path, "--comparison", "semantic", "--claim-judge", "claims")[
            "sections"
        ][0]["cases"][0]
    assert case["fields"] == []
    assert [c["text"] for c in case["claims"]["reference"]][-1] == '$.total = "798.60"'


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--claim-judge", "nobody"], "no judge configuration of that name"),
        (["--claim-judge", "j"], "judges criterion 'faithful'; a claim judge has none"),
    ],
)
def test_a_claim_judge_that_cannot_decide_claims_is_refused(project, tmp_path, args, message):
    from tests.judging.helpers import criterion_record, import_items

    import_items(project, write_jsonl(tmp_path / "c.jsonl", [criterion_record()]))
    judge(project, "", name="j")
    with pytest.raises(CommandError, match=message):
        score(project, tmp_path, *args)
    assert not Run.objects.exists()


def test_markdown_names_the_claim_figures_and_the_failing_claims(project, tmp_path):
    from judging.models import ScoreRun
    from judging.reports.scoring.markdown import render_markdown

    with WireServer("openai-compatible", [Say(json.dumps(DECISIONS))]) as srv:
        claim_judge(project, srv, "openai-compatible")
        score(project, tmp_path, "--claim-judge", "claims")
    text = render_markdown(ScoreRun.objects.get().report)
    assert "| openai/gpt-4o | - | 1 | 0.500 [0.500, 0.500] | 0.500 [0.500, 0.500] |" in text
    assert "- inv-1 (openai/gpt-4o) contradicted: It totals 789.60 EUR. (789.60 is not" in text
    exact = render_markdown(score(project, tmp_path, "--comparison", "exact"))
    assert "- inv-1: skipped $.summary (free text: not exact-compatible)" in exact


def test_the_api_takes_the_comparison_and_the_claim_judge(client, project):
    from reviews.models import Role
    from tests.factories import member
    from tests.helpers import bearer

    referenced_item(project, "inv-1", ROWS)
    record = {"case_id": "inv-1", "prediction": PREDICTION}
    url = f"/api/projects/{project.slug}/score-runs"
    headers = {"headers": bearer(member(project, Role.ADMIN))}
    with WireServer("openai-compatible", [Say(json.dumps(DECISIONS))]) as srv:
        claim_judge(project, srv, "openai-compatible")
        made = client.post(
            url, {"records": [record], "claim_judge": "claims"}, content_type="application/json",
            **headers,
        )  # fmt: skip
    assert made.status_code == 201, made.content
    claims = made.json()["report"]["sections"][0]["cases"][0]["claims"]
    assert claims["claim_precision"]["value"] == 0.5
    refused = client.post(
        url, {"records": [record], "claim_judge": "nobody"}, content_type="application/json",
        **headers,
    )  # fmt: skip
    assert refused.status_code == 422
    assert "no judge configuration" in refused.json()["error"]["reason"]
    wrong = client.post(
        url, {"records": [record], "comparison": "fuzzy"}, content_type="application/json",
        **headers,
    )  # fmt: skip
    assert wrong.status_code == 422


def evidence_item(project, tmp_path):
    from reviews.evidence import DrawText, build_pdf
    from tests.judging.helpers import import_items, item_record

    pdf = tmp_path / "receipt.pdf"
    pdf.write_bytes(build_pdf([[DrawText(72, 72, "Total due EUR 798.60")]]))
    records = [item_record("ev-1", evidence=["receipt.pdf"])]
    import_items(project, write_jsonl(tmp_path / "items.jsonl", records))
    path = write_jsonl(
        tmp_path / "ev-preds.jsonl",
        [{"case_id": "ev-1", "prediction": {"total": "798.60", "currency": "USD"}}],
    )
    return path


def test_evidence_only_the_judge_reads_the_pages_and_recall_is_estimated(project, tmp_path):
    path = evidence_item(project, tmp_path)
    reply = {
        "predicted": [
            {"id": "p1", "decision": "supported", "explanation": "page 1"},
            {"id": "p2", "decision": "contradicted", "explanation": "the page says EUR"},
        ],
        "reference": [
            {"id": "a", "text": "The total due is 798.60", "decision": "matched"},
            {"id": "b", "text": "The currency is EUR", "decision": "missed"},
            {"id": "c", "text": " ", "decision": "matched"},  # no text: dropped
        ],
    }
    with WireServer("openai-compatible", [Say(json.dumps(reply))]) as srv:
        claim_judge(project, srv, "openai-compatible")
        out = StringIO()
        call_command("score_predictions", "--project", project.slug, str(path), "--format",
                     "json", "--claim-judge", "claims", stdout=out, stderr=StringIO())  # fmt: skip
    content = srv.requests[0]["json"]["messages"][-1]["content"]
    assert any(part["type"] == "image_url" for part in content)  # the page, as an image
    report = json.loads(out.getvalue())
    truth, section = report["sections"]  # nothing against ground truth; the evidence section
    assert truth["cases"] == []
    assert section["reference"] == "evidence" and "no reference" in section["label"]
    claims = section["cases"][0]["claims"]
    assert claims["reference_source"] == "evidence"
    assert claims["reference_recall_label"] == "estimated by a judge"
    assert [(c["id"], c["text"], c["decision"]) for c in claims["reference"]] == [
        ("e1", "The total due is 798.60", "matched"), ("e2", "The currency is EUR", "missed")
    ]  # fmt: skip
    assert claims["reference_recall"]["value"] == 0.5
    assert claims["claim_precision"]["value"] == 0.5
    assert report["unscored"] == []


def test_evidence_only_without_a_claim_judge_is_unscored_and_says_what_would_score_it(
    project, tmp_path
):
    path = evidence_item(project, tmp_path)
    out = StringIO()
    call_command("score_predictions", "--project", project.slug, str(path), "--format", "json",
                 stdout=out, stderr=StringIO())  # fmt: skip
    (unscored,) = json.loads(out.getvalue())["unscored"]
    assert "its evidence can be checked by a claim judge" in unscored["reason"]


def test_claim_decisions_go_to_people_and_their_agreement_is_measured(project, tmp_path):
    """Each judged claim: an item, the judge's verdict, a question for raters; once people label
    the claims, the agreement report has the claim judge's row on each claim criterion."""
    from judging.models import ScoreRun, Verdict
    from reviews.models import Question
    from tests.judging.helpers import human_record, import_items, report_json, row_for

    with WireServer("openai-compatible", [Say(json.dumps(DECISIONS))]) as srv:
        claim_judge(project, srv, "openai-compatible")
        score(project, tmp_path, "--claim-judge", "claims")
    run = ScoreRun.objects.get()
    out = StringIO()
    call_command("send_claims_to_people", "--project", project.slug, "--score-run", str(run.pk),
                 stdout=out)  # fmt: skip
    items = project.items.filter(external_id__startswith=f"claim-{run.pk}-")
    assert items.count() == 5  # two predicted claims, three reference claims
    assert Question.objects.filter(item__in=items, kind="criterion").count() == 5
    assert set(Verdict.objects.filter(item__in=items).values_list("label", flat=True)) == {
        "supported", "contradicted", "matched", "missed", "undecidable"
    }  # fmt: skip
    first = items.get(external_id=f"claim-{run.pk}-1")
    assert first.output == "Northwind sent the invoice."
    assert "supported" not in json.dumps(first.input)  # the raters do not see the decision
    # sending again changes nothing
    call_command("send_claims_to_people", "--project", project.slug, "--score-run", str(run.pk),
                 stdout=StringIO())  # fmt: skip
    assert Verdict.objects.filter(item__in=items).count() == 5
    # people label the two predicted claims; one agrees with the judge
    labels = [
        human_record(f"claim-{run.pk}-1", "ana", "supported", criterion="claim_supported"),
        human_record(f"claim-{run.pk}-2", "ana", "supported", criterion="claim_supported"),
    ]
    import_items(project, write_jsonl(tmp_path / "people.jsonl", labels))  # fmt: skip
    report = report_json(project, "--split", "all", "--criterion", "claim_supported")
    row = row_for(report, "claim_supported", "openai-compatible/m")
    assert (row["n"], row["observed_agreement"]["value"]) == (2, 0.5)


def test_a_run_without_judged_claims_is_refused(project, tmp_path):
    from judging.models import ScoreRun

    score(project, tmp_path, "--comparison", "exact")
    run = ScoreRun.objects.get()
    with pytest.raises(CommandError, match="has no claim a claim judge decided"):
        call_command("send_claims_to_people", "--project", project.slug, "--score-run",
                     str(run.pk), stdout=StringIO())  # fmt: skip
    with pytest.raises(CommandError, match="No score run 999"):
        call_command("send_claims_to_people", "--project", project.slug, "--score-run", "999",
                     stdout=StringIO())  # fmt: skip


def test_the_run_page_sends_the_claims_for_admins_only(client, project, tmp_path):
    from django.urls import reverse

    from judging.models import ScoreRun
    from reviews.models import Role
    from tests.factories import member

    with WireServer("openai-compatible", [Say(json.dumps(DECISIONS))]) as srv:
        claim_judge(project, srv, "openai-compatible")
        score(project, tmp_path, "--claim-judge", "claims")
    run = ScoreRun.objects.get()
    url = reverse("score_claims_send", args=[project.slug, run.pk])
    client.force_login(member(project, Role.ADJUDICATOR))
    page = client.get(reverse("score_run", args=[project.slug, run.pk])).content.decode()
    assert "Send claim decisions to people" not in page
    assert client.post(url).status_code == 403
    client.force_login(member(project, Role.ADMIN))
    page = client.get(reverse("score_run", args=[project.slug, run.pk])).content.decode()
    assert "Send claim decisions to people" in page
    response = client.post(url, follow=True)
    assert "Claim decisions sent to people" in response.content.decode()
    assert project.items.filter(external_id__startswith="claim-").count() == 5
