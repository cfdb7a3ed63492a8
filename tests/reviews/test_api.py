"""The HTTP API: authentication, access (outsider 404 / wrong role 403), batch import, items."""

import base64
import io

import pytest
from django.test import Client
from PIL import Image

from reviews.models import Answer, Item, Role
from reviews.services.assignment.queue import assignment_claim_next
from reviews.services.projects.tokens import token_create, token_revoke
from reviews.services.rating.answers import AnswerInput, answer_record
from tests.factories import ItemFactory, ProjectFactory, member
from tests.helpers import bearer, row_counts

pytestmark = pytest.mark.django_db


def items_url(project) -> str:
    return f"/api/projects/{project.slug}/items"


def item_url(project, external_id) -> str:
    return f"/api/projects/{project.slug}/items/{external_id}"


def post_json(client, url, body, **headers):
    return client.post(url, body, content_type="application/json", headers=headers)


RECORDS = [
    {"type": "item", "item_id": "q-1", "input": "2+2?", "output": "4", "slices": ["math"]},
    {"type": "item", "item_id": "q-2", "input": "capital of France?", "output": "Paris"},
]

REVIEW = {
    "case_id": "statement-001",
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


# --- authentication ---------------------------------------------------------------------------


def test_token_authenticates_without_a_session(client, project):
    ItemFactory(project=project, external_id="q-1")
    response = client.get(item_url(project, "q-1"), headers=bearer(member(project, Role.APPROVER)))
    assert response.status_code == 200
    assert response.json()["external_id"] == "q-1"


@pytest.mark.parametrize("method", ["get", "post"])
def test_no_credentials_is_401_json_not_a_login_redirect(client, project, method):
    url = item_url(project, "q-1") if method == "get" else items_url(project)
    response = getattr(client, method)(url)
    assert response.status_code == 401
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert "Bearer" in response.json()["error"]["reason"]
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_revoked_token_is_401_even_beside_a_session(client, project, rater):
    ItemFactory(project=project, external_id="q-1")
    token, secret = token_create(actor=rater, name="old")
    token_revoke(actor=rater, token_pk=token.pk)
    client.force_login(rater)  # a wrong explicit credential never falls back to the session
    response = client.get(item_url(project, "q-1"), headers={"Authorization": f"Bearer {secret}"})
    assert response.status_code == 401
    assert response.json()["error"]["reason"] == "Invalid, revoked or expired API token."
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_session_works_and_unsafe_methods_need_csrf(project):
    admin = member(project, Role.ADMIN)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(admin)
    assert browser.get(item_url(project, "nope")).status_code == 404  # authenticated, no item
    refused = post_json(browser, items_url(project), {"format": "jsonl", "records": RECORDS})
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["error"]["reason"]
    assert not Item.objects.exists()
    browser.get("/accounts/login/")  # sets the csrftoken cookie
    csrf = browser.cookies["csrftoken"].value
    accepted = post_json(
        browser,
        items_url(project),
        {"format": "jsonl", "records": RECORDS},
        **{"X-CSRFToken": csrf},
    )
    assert accepted.status_code == 201


def test_token_requests_need_no_csrf(project):
    admin = member(project, Role.ADMIN)
    strict = Client(enforce_csrf_checks=True)
    response = post_json(
        strict, items_url(project), {"format": "jsonl", "records": RECORDS}, **bearer(admin)
    )
    assert response.status_code == 201


# --- access: outsider 404, wrong role 403 -----------------------------------------------------

ENDPOINTS = {
    "import": ("post", "/items", Role.RATER),
    "item": ("get", "/items/q-1", Role.RATER),  # a status tells a rater which item is gold
    "references": ("get", "/references", Role.RATER),
    "reference": ("get", "/references/q-1", Role.RATER),
}


def _call(client, project, endpoint, headers):
    method, suffix, _ = ENDPOINTS[endpoint]
    url = f"/api/projects/{project.slug}{suffix}"
    if method == "post":
        return post_json(client, url, {"format": "jsonl", "records": RECORDS}, **headers)
    return client.get(url, headers=headers)


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_outsider_gets_404(client, project, outsider, endpoint):
    ItemFactory(project=project, external_id="q-1")
    response = _call(client, project, endpoint, bearer(outsider))
    assert response.status_code == 404
    assert response.json() == {"error": {"reason": "No such project."}}


@pytest.mark.parametrize("endpoint", [e for e, (_, _, role) in ENDPOINTS.items() if role])
def test_wrong_role_gets_403(client, project, endpoint):
    ItemFactory(project=project, external_id="q-1")
    user = member(project, ENDPOINTS[endpoint][2])
    response = _call(client, project, endpoint, bearer(user))
    assert response.status_code == 403
    assert "role" in response.json()["error"]["reason"]
    assert Item.objects.count() == 1


# --- batch import -----------------------------------------------------------------------------


@pytest.fixture
def admin_headers(project):
    return bearer(member(project, Role.ADMIN))


def test_batch_creates_items_and_reposting_is_idempotent(client, project, admin_headers):
    body = {"format": "jsonl", "records": RECORDS}
    first = post_json(client, items_url(project), body, **admin_headers)
    assert first.status_code == 201, first.json()
    report = first.json()
    assert report["counts"]["items_created"] == 2
    assert report["file"] == "API request"
    assert report["summary"].startswith("imported 2 items")
    assert set(project.items.values_list("external_id", flat=True)) == {"q-1", "q-2"}
    assert list(project.items.get(external_id="q-1").slices.values_list("name", flat=True)) == [
        "math"
    ]
    before = row_counts()
    again = post_json(client, items_url(project), body, **admin_headers)
    assert again.status_code == 201
    counts = again.json()["counts"]
    assert counts["items_unchanged"] == 2 and not counts.get("items_created")
    assert row_counts() == before


@pytest.mark.parametrize(
    ("bad", "path", "reason"),
    [
        ({"type": "item", "item_id": "q-3", "slices": "math"}, "$.slices", "valid list"),
        ({"type": "itme", "item_id": "q-3"}, "$.type", "unknown type 'itme'"),
        ("not an object", "$", "expected a JSON object"),
    ],
)
def test_bad_record_is_422_naming_it_and_writes_nothing(
    client, project, admin_headers, bad, path, reason
):
    before = row_counts()
    body = {"format": "jsonl", "records": [RECORDS[0], bad]}
    response = post_json(client, items_url(project), body, **admin_headers)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["file"] == "API request"
    assert error["record"] == "records[1]" and error["index"] == 1
    assert error["path"] == path
    assert reason in error["reason"]
    assert row_counts() == before  # the good first record was rolled back too


def test_batch_body_must_match_its_format(client, project, admin_headers):
    response = post_json(
        client, items_url(project), {"format": "jsonl", "reviews": [REVIEW]}, **admin_headers
    )
    assert response.status_code == 422
    assert response.json()["error"]["reason"] == "format 'jsonl' needs a 'records' list"
    unknown = post_json(
        client, items_url(project), {"format": "csv", "records": []}, **admin_headers
    )
    assert unknown.status_code == 422
    assert unknown.json()["error"]["path"] == "$.format"


def test_malformed_json_is_400_with_the_reason(client, project, admin_headers):
    response = client.post(
        items_url(project),
        b'{"format": "jsonl", "format": "review"}',
        content_type="application/json",
        headers=admin_headers,
    )
    assert response.status_code == 400
    assert "duplicate key 'format'" in response.json()["error"]["reason"]


def test_review_objects_import_as_questions(client, project, admin_headers):
    response = post_json(
        client, items_url(project), {"format": "review", "reviews": [REVIEW]}, **admin_headers
    )
    assert response.status_code == 201, response.json()
    assert response.json()["counts"]["questions"] == 1
    item = project.items.get(external_id="statement-001")
    assert item.questions.get().key == "$.amount"


def test_review_citing_a_file_not_sent_says_how_to_send_it(client, project, admin_headers):
    cited = {**REVIEW, "sources": [{"artifact_id": "p1", "path": "scan.png"}]}
    before = row_counts()
    response = post_json(
        client, items_url(project), {"format": "review", "reviews": [cited]}, **admin_headers
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["record"] == 'case "statement-001"'
    assert error["path"] == "$.sources[0].path"
    assert "evidence file 'scan.png' not found in this request" in error["reason"]
    assert "`evidence`" in error["reason"]
    assert row_counts() == before


def test_item_record_citing_a_file_not_sent_is_422(client, project, admin_headers):
    record = {**RECORDS[0], "evidence": ["scan.png"]}
    response = post_json(
        client, items_url(project), {"format": "jsonl", "records": [record]}, **admin_headers
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert (error["record"], error["path"]) == ("records[0]", "$.evidence[0]")
    assert "not found in this request" in error["reason"]
    assert not Item.objects.exists()


def test_oversized_body_is_413_json(client, project, admin_headers, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 200
    records = [{"type": "item", "item_id": f"q-{n}", "input": "x" * 50} for n in range(10)]
    response = post_json(
        client, items_url(project), {"format": "jsonl", "records": records}, **admin_headers
    )
    assert response.status_code == 413
    assert "too large" in response.json()["error"]["reason"]
    assert not Item.objects.exists()


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), "white").save(buffer, format="PNG")
    return buffer.getvalue()


def test_review_with_base64_evidence(client, project, admin_headers):
    cited = {**REVIEW, "sources": [{"artifact_id": "p1", "path": "scans/scan.png"}]}
    body = {
        "format": "review",
        "reviews": [cited],
        "evidence": {"scans/scan.png": base64.b64encode(_png()).decode()},
    }
    response = post_json(client, items_url(project), body, **admin_headers)
    assert response.status_code == 201, response.json()
    source = project.items.get(external_id="statement-001").sources.get()
    assert source.document.kind == "image"


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("../escape.png", "aGk=", "escapes"),
        ("scan.png", "not base64!", "not valid base64"),
    ],
)
def test_bad_evidence_entries_are_422(client, project, admin_headers, name, data, reason):
    body = {"format": "review", "reviews": [REVIEW], "evidence": {name: data}}
    response = post_json(client, items_url(project), body, **admin_headers)
    assert response.status_code == 422
    error = response.json()["error"]
    assert reason in error["reason"]
    assert error["path"] == f'$.evidence["{name}"]'
    assert not Item.objects.exists()


# --- one item ---------------------------------------------------------------------------------


def test_item_detail_shows_counts_never_answers(client, project, admin_headers):
    post_json(
        client, items_url(project), {"format": "review", "reviews": [REVIEW]}, **admin_headers
    )
    rater = member(project, Role.RATER)
    other = member(project, Role.RATER)
    assignment = assignment_claim_next(rater=other, project=project)
    question = assignment.item.questions.get()
    answer_record(
        actor=other,
        assignment=assignment,
        question=question,
        given=AnswerInput(decision="set", value="1,290.00"),
        expected_seq=0,
    )
    assert Answer.objects.count() == 1

    refused = client.get(item_url(project, "statement-001"), headers=bearer(rater))
    assert refused.status_code == 403 and "open" not in refused.content.decode()

    admin_view = client.get(item_url(project, "statement-001"), headers=admin_headers).json()
    assert admin_view["status"] == "open" and admin_view["ground_truth"] is None
    assert admin_view["questions"][0]["answers"] == 1
    assert admin_view["assignments"] == {"active": 1}
    assert "1,290.00" not in str(admin_view)  # counts, never the answers themselves


def test_item_ids_with_slashes_and_unknown_items(client, project):
    ItemFactory(project=project, external_id="batch-7/q 1")
    headers = bearer(member(project, Role.ADJUDICATOR))
    assert client.get(item_url(project, "batch-7/q%201"), headers=headers).status_code == 200
    missing = client.get(item_url(project, "nope"), headers=headers)
    assert missing.status_code == 404
    assert missing.json() == {"error": {"reason": "No such item."}}


def test_items_of_another_project_are_404(client, project):
    ItemFactory(project=ProjectFactory(), external_id="q-1")
    headers = bearer(member(project, Role.ADJUDICATOR))
    assert client.get(item_url(project, "q-1"), headers=headers).status_code == 404


# --- docs -------------------------------------------------------------------------------------


def test_docs_and_schema_render_for_a_signed_in_user(client, rater):
    assert client.get("/api/docs").status_code == 302  # behind the site login, like any page
    client.force_login(rater)
    assert client.get("/api/docs").status_code == 200
    schema = client.get("/api/openapi.json").json()
    assert "/api/projects/{slug}/items" in schema["paths"]
    components = schema["components"]["schemas"]
    assert "ApprovedReference" in components
    # The batch body documents the importers' own record schemas.
    records = components["ItemsBatchIn"]["properties"]["records"]["anyOf"][0]["items"]
    kinds = {option["properties"]["type"]["const"] for option in records["oneOf"]}
    assert kinds == {"criterion", "item", "verdict", "human_label", "pairwise_verdict"}
    assert {"TokenAuth", "SessionAuth"} <= set(schema["components"]["securitySchemes"])


def test_text_survives_the_trip_through_the_importer(client, project, admin_headers):
    record = {"type": "item", "item_id": "é-1", "input": "line 1\nline 2 \u2028 ✓"}
    response = post_json(
        client, items_url(project), {"format": "jsonl", "records": [record]}, **admin_headers
    )
    assert response.status_code == 201
    assert project.items.get(external_id="é-1").input == record["input"]
