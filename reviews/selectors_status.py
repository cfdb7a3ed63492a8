"""One item's review status as the API shows it, and what each role may see of it."""

from __future__ import annotations

from django.db.models import Count

from reviews.models import Answer, Assignment, Authority, Item, Reference, Role


def _counts(item: Item) -> tuple[dict[int, int], dict[str, int]]:
    """Raters who answered each question, and assignments per status (gold checks aside:
    they are not the item's answers)."""
    answered = dict(
        Answer.objects.filter(question__item=item)
        .exclude(assignment__gold=True)
        .values_list("question_id")
        .annotate(n=Count("rater_id", distinct=True))
    )
    assignments = dict(
        Assignment.objects.filter(item=item, gold=False)
        .values_list("status")
        .annotate(n=Count("id"))
    )
    return answered, assignments


def _ground_truth(item: Item) -> dict | None:
    truth = (
        Reference.objects.filter(item=item, authority=Authority.GROUND_TRUTH)
        .select_related("approval")
        .order_by("-version")
        .first()
    )
    if truth is None:
        return None
    approval = getattr(truth, "approval", None)
    return {
        "version": truth.version,
        "sha256": truth.sha256,
        "approved_at": approval.approved_at if approval else None,
    }


def item_status(access, external_id: str) -> dict | None:
    """Status and questions of one item, and its current ground-truth version once approved;
    None when the project has no such item. Never anyone's answers or judge verdicts; answer
    and assignment counts only for adjudicators, approvers and admins (a rater sees statuses)."""
    item = Item.objects.filter(project=access.project, external_id=external_id).first()
    if item is None:
        return None
    sees_counts = access.has(Role.ADMIN, Role.ADJUDICATOR, Role.APPROVER)
    answered, assignments = _counts(item) if sees_counts else ({}, None)
    questions = [
        {
            "kind": q.kind,
            "key": q.key,
            "status": q.status,
            "answers": answered.get(q.pk, 0) if sees_counts else None,
        }
        for q in item.questions.order_by("position", "id")
    ]
    return {
        "external_id": item.external_id,
        "title": item.title,
        "status": item.status,
        "slices": sorted(item.slices.values_list("name", flat=True)),
        "questions": questions,
        "assignments": assignments,
        "ground_truth": _ground_truth(item),
        "created_at": item.created_at,
        "updated_at": item.updated_at,
    }
