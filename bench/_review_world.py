"""The review benchmark's world (bench/review_page.py): a project of n items in progress, its
reviewed item with questions, cited candidates and a one-page PDF, and the raters on it."""

from __future__ import annotations

from datetime import timedelta

CHUNK = 5_000


def _pdf_bytes() -> bytes:
    from reviews.evidence import DrawText, build_pdf

    return build_pdf(
        [
            [
                DrawText(72, 100, "Statement of account, March 2024", size=14),
                DrawText(72, 140, "Closing balance 12,480.55 EUR", size=11),
                DrawText(72, 160, "Total due 1,200.00 EUR", size=11),
            ]
        ],
        page_size=(595.0, 842.0),
    )


class Sized:
    """One project of `n` items, its reviewed item and the people who work on it."""

    def __init__(self, n: int, *, repeats: int):
        from django.contrib.auth import get_user_model
        from django.utils import timezone

        from reviews.formats.canonical import canonical_rows, rows_sha256
        from reviews.models import (
            Assignment,
            AssignmentStatus,
            Authority,
            Claim,
            Item,
            ItemSource,
            ItemStatus,
            Membership,
            Project,
            Question,
            QuestionKind,
            Reference,
            Role,
        )
        from reviews.services.files.documents import StoredFiles, document_for_bytes

        User = get_user_model()
        self.n = n
        self.project = Project.objects.create(slug=f"bench-{n}", name=f"Bench {n:,}", overlap=2)
        users = User.objects.bulk_create(
            User(username=f"b{n}-{kind}-{k}", password="!")
            for kind, count in (("rater", 1), ("other", 20), ("next", repeats), ("svc", repeats))
            for k in range(count)
        )
        Membership.objects.bulk_create(
            Membership(project=self.project, user=u, role=Role.RATER) for u in users
        )
        self.rater = users[0]
        self.admin = User.objects.create(username=f"b{n}-admin", password="!")
        Membership.objects.create(project=self.project, user=self.admin, role=Role.ADMIN)
        others = users[1:21]
        self.next_raters = users[21 : 21 + repeats]
        self.service_raters = users[21 + repeats :]

        # The reviewed item comes first: questions, candidates, evidence, a generated reference.
        self.item = Item.objects.create(project=self.project, external_id="reviewed-0000000")
        document, _ = document_for_bytes(_pdf_bytes(), name="statement.pdf", written=StoredFiles())
        source = ItemSource.objects.create(
            item=self.item,
            artifact_id="statement-p1",
            document=document,
            path="statement.pdf",
            page=1,
        )
        self.questions = []
        for position, (key, values) in enumerate(
            [
                ("$.closing_balance", ["12,480.55", "12,840.55"]),
                ("$.total_due", ["1,200.00", "1,290.00"]),
                ("$.period", ["March 2024"]),
            ]
        ):
            question = Question.objects.create(
                item=self.item,
                kind=QuestionKind.FIELD,
                key=key,
                reason="disagreement",
                position=position,
            )
            Claim.objects.bulk_create(
                Claim(
                    item=self.item,
                    question=question,
                    path=key,
                    value=value,
                    providers=[f"model-{k}"],
                    confidence=0.9 - 0.2 * k,
                    source=source,
                    page=1,
                    quote=value,
                    bbox=[72, 150, 260, 165],
                    position=k,
                )
                for k, value in enumerate(values)
            )
            self.questions.append(question)
        rows = canonical_rows([{"path": "$.currency", "expected_value": "EUR"}])
        Reference.objects.create(
            item=self.item,
            authority=Authority.GENERATED,
            version=1,
            rows=rows,
            sha256=rows_sha256(rows),
        )
        now = timezone.now()
        Assignment.objects.create(
            item=self.item,
            rater=self.rater,
            status=AssignmentStatus.ACTIVE,
            opened_at=now,
            lease_expires_at=now + timedelta(days=1),
        )

        # The rest: bare items; 40 % resolved, one open item in ten held by another rater.
        lease = now + timedelta(days=1)
        for start in range(1, n, CHUNK):
            batch = Item.objects.bulk_create(
                Item(
                    project=self.project,
                    external_id=f"bulk-{k:07d}",
                    title=f"Sample {k}",
                    status=ItemStatus.RESOLVED if k % 5 < 2 else ItemStatus.OPEN,
                )
                for k in range(start, min(n, start + CHUNK))
            )
            Assignment.objects.bulk_create(
                Assignment(
                    item=item,
                    rater=others[k % len(others)],
                    status=AssignmentStatus.ACTIVE,
                    lease_expires_at=lease,
                )
                for k, item in enumerate(batch)
                if item.status == ItemStatus.OPEN and k % 10 == 3
            )
