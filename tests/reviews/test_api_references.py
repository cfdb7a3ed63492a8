"""The API's approved references: a stable paged list, and one §3 document with ETag / 304."""

import json

import pytest

from reviews.models import ItemStatus, Role
from reviews.reports.exports import approved_items, reference_document
from reviews.services.approval.approve import approval_record
from reviews.services.assignment.queue import assignment_claim_next
from reviews.services.imports.pipeline import file_import
from reviews.services.rating.answers import AnswerInput, answer_record, assignment_submit
from tests.factories import PASSWORD, member
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def _review(case_id: str) -> dict:
    return {
        "case_id": case_id,
        "claims": [{"path": "$.currency", "expected_value": "USD"}],
        "review_items": [
            {
                "path": "$.amount",
                "reason": "disagreement",
                "candidates": [
                    {"provider": "openai", "expected_value": "1,200.00"},
                    {"provider": "claude", "expected_value": "1,290.00"},
                ],
            },
        ],
    }


@pytest.fixture
def approver(project):
    return member(project, Role.APPROVER)


@pytest.fixture
def approve_cases(project, approver, tmp_path):
    """Import review cases, have two raters agree on each, and approve them (all services)."""
    admin = member(project, Role.ADMIN)
    raters = [member(project, Role.RATER), member(project, Role.RATER)]

    def run(*case_ids):
        path = tmp_path / "cases.jsonl"
        path.write_text("".join(json.dumps(_review(c)) + "\n" for c in case_ids))
        file_import(actor=admin, project=project, path=path, format="review")
        for _ in case_ids:
            for rater in raters:
                assignment = assignment_claim_next(rater=rater, project=project)
                question = assignment.item.questions.get()
                answer_record(
                    actor=rater,
                    assignment=assignment,
                    question=question,
                    given=AnswerInput(decision="set", value="1,200.00"),
                    expected_seq=0,
                )
                assignment_submit(actor=rater, assignment=assignment)
        for case_id in case_ids:
            item = project.items.get(external_id=case_id)
            approval_record(actor=approver, item=item, password=PASSWORD, confirmed=True)
            item.refresh_from_db()
            assert item.status == ItemStatus.APPROVED

    return run


def test_list_pages_in_case_order(client, project, approver, approve_cases):
    approve_cases("case-b", "case-a", "case-c")
    headers = bearer(approver)
    url = f"/api/projects/{project.slug}/references"
    first = client.get(url, {"limit": 2}, headers=headers).json()
    assert [r["case_id"] for r in first["items"]] == ["case-a", "case-b"]
    assert first["next_after"] == "case-b"
    entry = first["items"][0]
    assert entry["version"] == 2  # v1 is the generated reference
    assert len(entry["sha256"]) == 64 and entry["approved_by"] == approver.email
    assert entry["etag"] == f'"v2-{entry["sha256"]}"'
    second = client.get(url, {"limit": 2, "after": "case-b"}, headers=headers).json()
    assert [r["case_id"] for r in second["items"]] == ["case-c"]
    assert second["next_after"] is None


def test_list_is_bounded_and_refuses_bad_limits(
    client, project, approver, approve_cases, django_assert_max_num_queries
):
    approve_cases("case-a")
    headers = bearer(approver)
    url = f"/api/projects/{project.slug}/references"
    with django_assert_max_num_queries(4):  # token, membership, one page (+ last_used_at)
        assert client.get(url, headers=headers).status_code == 200
    response = client.get(url, {"limit": 0}, headers=headers)
    assert response.status_code == 422
    assert response.json()["error"]["path"] == "$.limit"


def test_detail_is_the_exported_reference_with_an_etag(client, project, approver, approve_cases):
    approve_cases("case-a")
    headers = bearer(approver)
    url = f"/api/projects/{project.slug}/references/case-a"
    response = client.get(url, headers=headers)
    assert response.status_code == 200
    (entry,) = approved_items(project)
    assert response.json() == reference_document(entry).model_dump(mode="json")
    body = response.json()
    assert body["authority"] == "ground_truth" and body["rows"] == [
        {"path": "$.amount", "expected_value": "1,200.00"},
        {"path": "$.currency", "expected_value": "USD"},
    ]
    etag = response["ETag"]
    assert etag == f'"v{body["version"]}-{body["approval"]["sha256"]}"'

    cached = client.get(url, headers={**headers, "If-None-Match": etag})
    assert cached.status_code == 304
    assert cached.content == b"" and cached["ETag"] == etag
    stale = client.get(url, headers={**headers, "If-None-Match": '"v1-0000"'})
    assert stale.status_code == 200


def test_detail_of_an_unapproved_item_is_404(client, project, approver, approve_cases):
    approve_cases("case-a")
    project.items.create(external_id="pending", title="pending")
    response = client.get(
        f"/api/projects/{project.slug}/references/pending", headers=bearer(approver)
    )
    assert response.status_code == 404
    assert response.json() == {"error": {"reason": "No approved reference for this item."}}


def test_admin_reads_references_too(client, project, approve_cases):
    approve_cases("case-a")
    admin = member(project, Role.ADMIN)
    response = client.get(f"/api/projects/{project.slug}/references", headers=bearer(admin))
    assert [r["case_id"] for r in response.json()["items"]] == ["case-a"]


def test_item_detail_shows_the_ground_truth_version(client, project, approve_cases):
    approve_cases("case-a")
    headers = bearer(member(project, Role.ADJUDICATOR))
    body = client.get(f"/api/projects/{project.slug}/items/case-a", headers=headers).json()
    assert body["status"] == "approved"
    assert body["ground_truth"]["version"] == 2
    assert body["ground_truth"]["approved_at"]
    assert [(q["key"], q["status"]) for q in body["questions"]] == [("$.amount", "resolved")]
