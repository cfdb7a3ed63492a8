"""What a generation records beyond its review file: the readers' independence from a producer
known from the items, the timeline record (claims, reconciliation, prompt SHA-256), progress
and cost."""

import json

import pytest
from django.urls import reverse

from judging.models import JudgeVersion, Run
from judging.services.runs.prices import price_add
from reviews.models import EventKind, Item, Question, Reference, Role
from reviews.services.imports.pipeline import file_import
from tests.factories import member
from tests.judging.generation_helpers import FIRST, SECOND, generate, reader, statement
from tests.judging.wire_server import WireServer


def _prediction_with_evidence(project, tmp_path, producer) -> Item:
    """An item imported (FORMATS §4) with the statement as evidence and who predicted it."""
    folder = tmp_path / "predictions"
    folder.mkdir()
    (folder / "statement.pdf").write_bytes(statement(tmp_path).read_bytes())
    record = {"type": "item", "item_id": "stmt-001", "output": {"total": "798.60"},
              "evidence": ["statement.pdf"], "producer": producer}  # fmt: skip
    path = folder / "items.jsonl"
    path.write_text(json.dumps(record) + "\n")
    file_import(actor=None, project=project, path=path, format="jsonl")
    return Item.objects.get(project=project, external_id="stmt-001")


def _record(item) -> dict:
    return item.events.filter(kind=EventKind.GENERATED).latest("id").data


def test_producer_known_from_the_item_labels_readers_and_flags_their_fields(project, tmp_path):
    item = _prediction_with_evidence(
        project, tmp_path, {"provider": "openai-compatible", "model": "model-a"}
    )
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        out = generate(project, tmp_path, srv)  # no --producer
    assert out.startswith("stmt-001:")  # the item that holds this evidence, not a new one
    assert Item.objects.filter(project=project).count() == 1
    record = _record(item)
    labels = {r["name"]: r["independence"] for r in record["readers"]}
    assert record["producer"] == "openai-compatible/model-a"
    assert labels == {"model-a": "same_model", "model-b": "same_provider"}
    # both readers are of the producer's family: what they agree on is not settled by them
    assert Reference.objects.get(item=item, authority="generated").rows == []
    flagged = Question.objects.get(item=item, key="$.currency")
    assert flagged.reason == "low_confidence"
    assert record["reconciliation"]["$.currency"].startswith("low_confidence: settled only")


def test_an_independent_producer_flags_nothing(project, tmp_path):
    item = _prediction_with_evidence(project, tmp_path, "anthropic/claude-x")
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        generate(project, tmp_path, srv)
    labels = {r["name"]: r["independence"] for r in _record(item)["readers"]}
    assert labels == {"model-a": "independent", "model-b": "independent"}
    rows = Reference.objects.get(item=item, authority="generated").rows
    assert {r["path"] for r in rows} == {"$.currency", "$.account"}


def test_the_producer_option_overrides_the_known_one(project, tmp_path):
    item = _prediction_with_evidence(project, tmp_path, "anthropic/claude-x")
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        generate(project, tmp_path, srv, "--producer", "openai-compatible/model-b")
    labels = {r["name"]: r["independence"] for r in _record(item)["readers"]}
    assert labels == {"model-a": "same_provider", "model-b": "same_model"}


def test_a_producer_must_be_provider_slash_model(project, tmp_path):
    from django.core.management import CommandError

    with (
        WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv,
        pytest.raises(CommandError, match="write it as provider/model"),
    ):
        generate(project, tmp_path, srv, "--producer", "gpt-4o")
    assert not Run.objects.exists()


def test_without_a_known_producer_readers_are_unknown(project, tmp_path):
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        generate(project, tmp_path, srv)
    record = _record(Item.objects.get())
    assert record["producer"] == "unknown"
    assert {r["independence"] for r in record["readers"]} == {"unknown"}


def test_timeline_shows_every_readers_claims_reconciliation_and_prompt_sha(
    client, project, tmp_path
):
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        generate(project, tmp_path, srv, "--second-read")
    item = Item.objects.get()
    client.force_login(member(project, Role.ADMIN))
    page = client.get(reverse("item_timeline", args=[project.slug, item.pk])).content.decode()
    for version in JudgeVersion.objects.all():
        assert version.prompt_sha256 in page
    assert "$.total</code> = 789.60, p. 2" in page  # model-b's first-read claim
    assert "Second read of the disputed fields" in page
    assert "$.total</code>: agreed (second read)" in page
    assert "$.iban</code>: omitted_by_some" in page
    # the review file itself stays pure FORMATS §2
    assert "generation" not in item.metadata["review_file"]


def test_progress_counts_every_read_before_it_is_made_and_cost_is_shown(client, project, tmp_path):
    price_add(
        provider="openai-compatible", model="model-a", input_per_million=1000,
        output_per_million=1000,
    )  # fmt: skip
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        generate(project, tmp_path, srv)
        generate(project, tmp_path, srv)  # again: every read reused
    runs = list(Run.objects.order_by("pk"))
    first, again = ({r.version.model: r for r in half} for half in (runs[:2], runs[2:]))
    assert (first["model-a"].planned, first["model-a"].done, first["model-a"].reused) == (1, 1, 0)
    assert (again["model-a"].planned, again["model-a"].done, again["model-a"].reused) == (1, 0, 1)
    client.force_login(member(project, Role.ADMIN))
    page = client.get(reverse("generate", args=[project.slug])).content.decode()
    assert "1 of 1 calls" in page and "cost $0.0" in page
    assert "no price was in force for this model" in page  # model-b has none


def test_producer_named_by_an_imported_review_file_is_kept_and_used(project, tmp_path):
    folder = tmp_path / "review"
    folder.mkdir()
    (folder / "statement.pdf").write_bytes(statement(tmp_path).read_bytes())
    review = {"case_id": "stmt-rf", "producer": "openai-compatible/model-b",
              "expected_fields": ["$.total"], "claims": [], "review_items": [],
              "sources": [{"artifact_id": "page-001", "path": "statement.pdf",
                           "metadata": {"page": 1}}]}  # fmt: skip
    (folder / "stmt.json").write_text(json.dumps(review))
    report = file_import(actor=None, project=project, path=folder / "stmt.json", format="review")
    assert not report.notes  # `producer` is kept, not reported as an unknown key
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        out = generate(project, tmp_path, srv)
    assert out.startswith("stmt-rf:")
    item = Item.objects.get(project=project)
    labels = {r["name"]: r["independence"] for r in _record(item)["readers"]}
    assert labels == {"model-a": "same_provider", "model-b": "same_model"}
    # the generated file carries the producer on, so the next generation still knows it
    assert item.metadata["review_file"]["producer"] == "openai-compatible/model-b"
