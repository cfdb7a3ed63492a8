"""Import predictions in the browser → per-field accuracy → a failing stage's failure context."""

import json

import pytest
from playwright.sync_api import expect

from reviews.models import Role
from tests.factories import PASSWORD, ProjectFactory, member
from tests.judging.helpers import INVOICE_ROWS, invoice_predictions, referenced_item

pytestmark = pytest.mark.django_db(transaction=True)


def test_predictions_to_field_accuracy_and_failure_context(
    page, live_server, login, screenshot, tmp_path
):
    project = ProjectFactory(slug="invoices", name="Invoices")
    referenced_item(project, "inv-1", INVOICE_ROWS)
    referenced_item(project, "inv-2", INVOICE_ROWS)
    member(project, Role.ADMIN, username="alex")
    # inv-1: extraction misread 5.00 as 8 and the total summed it; inv-2: all right.
    records = invoice_predictions("inv-1", "8", "18") + invoice_predictions("inv-2", "5", "15")
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))

    page.set_viewport_size({"width": 1280, "height": 800})
    login("alex", PASSWORD)
    page.goto(f"{live_server.url}/p/invoices/")
    page.get_by_role("link", name="Scores").click()
    page.get_by_label("Predictions (JSONL)").set_input_files(str(path))
    page.get_by_role("button", name="Score").click()

    expect(
        page.get_by_role("heading", name="Accuracy against approved ground truth")
    ).to_be_visible()
    amount = page.locator("table.score-fields tr[data-path='$.invoice.lines[1].amount']")
    expect(amount.locator("td").nth(7)).to_contain_text("0.500")
    total_field = page.locator("table.score-fields tr[data-path='$.total']")
    expect(total_field.locator("td").nth(4)).to_have_text("1")  # one of two totals correct

    failing = page.locator("table.score-cases tr[data-case='inv-1'][data-stage='total']")
    expect(failing.locator(".failure-context")).to_have_text("upstream_or_combined")
    node = page.locator(".pipeline[data-case='inv-1'] g[data-stage='total']")
    expect(node).to_have_attribute("data-context", "upstream_or_combined")
    screenshot("scores-run")

    # The counts table leads to the records of that stage and context.
    counts = page.locator("table.score-contexts tr[data-stage='total']")
    counts.get_by_role("link", name="1").first.click()
    expect(page.get_by_text("with failure context")).to_be_visible()
    rows = page.locator("table.score-cases tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first.locator(".failure-context")).to_have_text("upstream_or_combined")
    screenshot("scores-filtered")


def test_predictions_to_one_cases_claim_decisions(page, live_server, login, screenshot, tmp_path):
    """Free text scored by a claim judge (a local model server): the run's claim figures, then
    one case's page with every claim's decision and why."""
    from tests.judging.run_helpers import judge
    from tests.judging.test_claim_scoring import DECISIONS, PREDICTION, PROMPT, ROWS
    from tests.judging.wire_server import Say, WireServer

    project = ProjectFactory(slug="summaries", name="Summaries")
    referenced_item(project, "inv-1", ROWS)
    member(project, Role.ADMIN, username="alex")
    path = tmp_path / "predictions.jsonl"
    path.write_text(json.dumps({"case_id": "inv-1", "prediction": PREDICTION}) + "\n")

    page.set_viewport_size({"width": 1280, "height": 800})
    with WireServer("openai-compatible", [Say(json.dumps(DECISIONS))]) as srv:
        judge(project, srv.url, name="claims", criterion=None, prompt=PROMPT)
        login("alex", PASSWORD)
        page.goto(f"{live_server.url}/p/summaries/scores/")
        page.get_by_label("Predictions (JSONL)").set_input_files(str(path))
        page.get_by_label("Comparison").select_option("auto")
        page.get_by_label("Claim judge").select_option("claims")
        page.get_by_role("button", name="Score").click()
        expect(page.locator("table.score-claims tbody tr")).to_have_count(1)
    row = page.locator("table.score-claims tbody tr").first
    expect(row.locator("td").nth(3)).to_contain_text("0.500")  # claim precision
    screenshot("scores-claims")

    page.locator("a.claims-link").click()
    expect(page.get_by_role("heading", name="Case inv-1")).to_be_visible()
    predicted = page.locator("table.claim-decisions[data-side='predicted'] tbody tr")
    expect(predicted).to_have_count(2)
    expect(predicted.nth(1)).to_have_attribute("data-decision", "contradicted")
    expect(predicted.nth(1)).to_contain_text("789.60 is not 798.60")
    reference = page.locator("table.claim-decisions[data-side='reference'] tbody tr")
    expect(reference).to_have_count(3)
    expect(reference.nth(1)).to_have_attribute("data-decision", "missed")
    expect(page.get_by_text("decided by claims@1")).to_be_visible()
    screenshot("scores-claim-decisions")
