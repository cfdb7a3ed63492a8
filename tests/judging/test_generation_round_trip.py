"""The generated review file is an ordinary FORMATS §2 file: it imports into a fresh project
unchanged, and once approved it exports, re-imports and exports again byte for byte.

The rule checked: (1) the pending file a generation stored, written out with its evidence and
imported into a fresh project, is stored there as the same JSON (dict equality, so the same
export bytes) with the same generated rows (SHA-256) and the same questions and candidates;
(2) its approved export, imported back into its project, is a no-op, and the next export is
byte-equal to the first. (Importing the signed export into ANOTHER project is refused by
design: format 2 signs the project; tests/reviews/test_import_round_trip.py covers that.)
"""

import json
import shutil

from reviews.models import Claim, Item, Reference, Role
from reviews.reports.exports import files_export
from reviews.services.approval.approve import approval_record
from reviews.services.imports.pipeline import file_import
from tests.factories import PASSWORD, ProjectFactory, member
from tests.judging.generation_helpers import FIRST, SECOND, generate, reader
from tests.judging.wire_server import WireServer


def _write(review: dict, evidence, folder):
    """The review file beside its evidence, where its sources say."""
    for source in {s["path"] for s in review["sources"]}:
        (folder / source).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(evidence, folder / source)
    path = folder / f"{review['case_id']}.review.json"
    path.write_text(json.dumps(review))
    return path


def _questions(item: Item) -> list:
    claims = Claim.objects.filter(item=item, question__isnull=False).order_by("path", "position")
    return [
        (c.question.key, c.question.reason, c.value, c.providers, c.page, c.quote, c.confidence)
        for c in claims.select_related("question")
    ]


def _generated(item: Item) -> Reference:
    return Reference.objects.get(item=item, authority="generated")


def test_generated_file_imports_into_a_fresh_project_unchanged(project, tmp_path):
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        generate(project, tmp_path, srv)
    generated = Item.objects.get(project=project)
    review = generated.metadata["review_file"]
    evidence = generated.sources.first().document
    fresh = ProjectFactory()
    folder = tmp_path / "out"
    path = _write(review, evidence.file.path, folder)
    report = file_import(actor=None, project=fresh, path=path, format="review")
    assert not report.notes  # no unknown key was dropped: the file is pure §2
    again = Item.objects.get(project=fresh)
    assert again.external_id == generated.external_id
    assert again.metadata["review_file"] == review
    assert _generated(again).sha256 == _generated(generated).sha256
    assert _questions(again) == _questions(generated)


def test_approved_export_imports_back_unchanged_and_exports_byte_equal(project, tmp_path, rate):
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        generate(project, tmp_path, srv)
    item = Item.objects.get(project=project)
    for name in ("r1", "r2"):
        answers = {"$.total": "798.60", "$.iban": "DE00"}
        rate(member(project, Role.RATER, username=name), item, answers)
    approver = member(project, Role.APPROVER, username="appr")
    approval_record(actor=approver, item=item, password=PASSWORD, confirmed=True)
    (name, first), *_ = files_export(actor=None, project=project, format="review").items()
    exported = json.loads(first)
    assert exported["status"] == "approved" and "generation" not in exported
    path = _write(exported, item.sources.first().document.file.path, tmp_path / "back")
    references = Reference.objects.filter(item=item).count()
    report = file_import(actor=None, project=project, path=path, format="review")
    assert report.counts["items_unchanged"] == 1 and not report.counts.get("ground_truth")
    assert Reference.objects.filter(item=item).count() == references
    assert files_export(actor=None, project=project, format="review")[name] == first
