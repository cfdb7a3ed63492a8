import itertools
import os
from pathlib import Path

import pytest
from django.test import override_settings
from hypothesis import settings as hypothesis_settings

from tests.factories import ProjectFactory, member

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture
def project(db):
    return ProjectFactory()


@pytest.fixture
def rater(project):
    return member(project, "rater")


@pytest.fixture
def outsider(db):
    return member(ProjectFactory())


# Hypothesis: `ci` (chosen when CI=true) draws the same examples on every run, so a red CI run
# is reproducible and a green one is not luck; `dev` keeps exploring new examples locally.
hypothesis_settings.register_profile(
    "ci", derandomize=True, database=None, deadline=None, print_blob=True
)
hypothesis_settings.register_profile("dev", deadline=None)
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") == "true" else "dev")
)


@pytest.fixture(autouse=True, scope="session")
def _fast_passwords():
    """MD5 password hashing for the whole suite: PBKDF2's 1M iterations cost ~0.5 s per user."""
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


_TEST_FOLDERS = itertools.count(1)


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path_factory):
    """Every test writes evidence, renders and keys into its own folder. The folder is only
    named here, not made (storage and key writers make it), which spares each test the cost of
    pytest's `tmp_path` (a directory and a symlink); tests that want `tmp_path` still ask."""
    folder = tmp_path_factory.getbasetemp() / "media-of-tests" / f"test-{next(_TEST_FOLDERS)}"
    settings.MEDIA_ROOT = folder / "media"
    settings.SIGNING_KEY_PATH = folder / "signing-key.pem"
    # Tests do not run collectstatic, so no hashed manifest.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture(autouse=True)
def _judge_endpoints(settings):
    """Judges in tests talk to stub servers on loopback ports, with the STUB_KEY variable."""
    settings.JUDGE_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.JUDGE_API_KEY_ENVS = [*settings.JUDGE_API_KEY_ENVS, "STUB_KEY"]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Debian's Chromium, never a downloaded browser."""
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(
                "CI needs /usr/bin/chromium for the browser tests (apt-get install chromium)"
            )
        pytest.skip("/usr/bin/chromium is not installed")
    return {
        **browser_type_launch_args,
        "executable_path": str(CHROMIUM),
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    }


# --- Review workflow builders (tests/reviews/test_workflow_*, test_views_*, test_queries_*) ---


@pytest.fixture
def review_item(db):
    """Build an item as a review-file import leaves it, without evidence files.

        review_item(project, {"$.total": ["1,200.00", "1,290.00"]}, rows={"$.currency": "EUR"})

    gives an OPEN item with one field question per key (its candidates from providers
    `provider-1`, `provider-2`… with confidences 0.71, 0.62…), consensus claims for `rows`, and a
    generated Reference of `rows`. `criteria={"tone": ["good", "bad"]}` adds criterion questions.
    """
    from reviews.formats.canonical import canonical_rows, rows_sha256
    from reviews.models import Authority, Claim, Item, Question, QuestionKind, Reference

    counter = iter(range(1, 1_000_000))

    def build(project, fields=None, *, rows=None, criteria=None, external_id=None, overlap=None):
        fields = {"$.total": ["1,200.00", "1,290.00"]} if fields is None else fields
        rows = {"$.currency": "EUR"} if rows is None else rows
        item = Item.objects.create(
            project=project,
            external_id=external_id or f"case-{next(counter):04d}",
            overlap=overlap,
        )
        for position, (key, values) in enumerate(fields.items()):
            question = Question.objects.create(
                item=item,
                kind=QuestionKind.FIELD,
                key=key,
                reason="disagreement",
                position=position,
            )
            Claim.objects.bulk_create(
                Claim(
                    item=item,
                    question=question,
                    path=key,
                    value=value,
                    providers=[f"provider-{n}"],
                    confidence=round(0.71 - 0.09 * (n - 1), 2),
                    page=1,
                    quote=str(value),
                    position=n,
                )
                for n, value in enumerate(values, start=1)
            )
        for position, (name, labels) in enumerate((criteria or {}).items(), start=len(fields)):
            Question.objects.create(
                item=item,
                kind=QuestionKind.CRITERION,
                key=name,
                labels=list(labels),
                prompt=f"Is the {name} right?",
                position=position,
            )
        Claim.objects.bulk_create(
            Claim(
                item=item,
                path=path,
                value=value,
                providers=["provider-1", "provider-2"],
                position=n,
            )
            for n, (path, value) in enumerate(rows.items())
        )
        generated = canonical_rows({"path": p, "expected_value": v} for p, v in rows.items())
        Reference.objects.create(
            item=item,
            authority=Authority.GENERATED,
            version=1,
            rows=generated,
            sha256=rows_sha256(generated),
            source_name="built-in-test",
        )
        return item

    return build


@pytest.fixture
def rate(db):
    """rate(rater, item, {"$.total": "1200"}) → the rater's Assignment, answered and submitted.

    Plain values are typed values (decision `set`); pass an `AnswerInput` for anything else.
    `submit=False` leaves the assignment active. Goes through the services, like the views.
    """
    from datetime import timedelta

    from django.utils import timezone

    from reviews.models import Assignment, AssignmentStatus, Decision
    from reviews.services.answers import (
        AnswerInput,
        answer_record,
        assignment_submit,
        latest_answer,
    )

    def rate(rater, item, answers, *, submit=True, assignment=None):
        now = timezone.now()
        if assignment is None:
            assignment = Assignment.objects.create(
                item=item,
                rater=rater,
                status=AssignmentStatus.ACTIVE,
                opened_at=now,
                lease_expires_at=now + timedelta(hours=1),
            )
        for key, value in answers.items():
            question = item.questions.get(key=key)
            given = value if isinstance(value, AnswerInput) else AnswerInput(Decision.SET, value)
            previous = latest_answer(question=question, rater=rater)
            answer_record(
                actor=rater,
                assignment=assignment,
                question=question,
                given=given,
                expected_seq=previous.seq if previous else 0,
            )
        if submit:
            assignment_submit(actor=rater, assignment=assignment)
            assignment.refresh_from_db()
        return assignment

    return rate


_PDFS: dict[str, bytes] = {}


@pytest.fixture
def attach_evidence(db):
    """attach_evidence(item) → a one-page PDF Document cited by the item and all its claims."""
    from reviews.evidence import DrawText, build_pdf
    from reviews.models import ItemSource
    from reviews.services.documents import StoredFiles, document_for_bytes

    def attach(item, text="Statement of account. Total due 1,200.00 EUR"):
        if text not in _PDFS:  # building is the slow part; the bytes are the same every time
            _PDFS[text] = build_pdf([[DrawText(20, 60, text, size=11)]], page_size=(300.0, 200.0))
        document, _ = document_for_bytes(_PDFS[text], name="statement.pdf", written=StoredFiles())
        source = ItemSource.objects.create(
            item=item, artifact_id="statement-p1", document=document, path="statement.pdf", page=1
        )
        item.claims.update(source=source, page=1)
        return document

    return attach
