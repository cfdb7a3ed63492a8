"""Failure analysis: adjudicators tag each disagreement with a bucket; dashboards count them."""

from __future__ import annotations

from collections import Counter, defaultdict

from django.core.exceptions import ValidationError
from django.db import transaction

from judging.models import DEFAULT_FAILURE_BUCKETS, FailureBucket, FailureTag


def buckets_for(project) -> list[FailureBucket]:
    """The project's buckets; a project starts with the five usual ones."""
    buckets = list(FailureBucket.objects.filter(project=project))
    if not buckets:
        FailureBucket.objects.bulk_create(
            [
                FailureBucket(project=project, name=name, position=n)
                for n, name in enumerate(DEFAULT_FAILURE_BUCKETS)
            ],
            ignore_conflicts=True,
        )
        buckets = list(FailureBucket.objects.filter(project=project))
    return buckets


@transaction.atomic
def failure_tag(
    *, actor, project, item, criterion: str, judge: str, bucket_pk: int | None, note: str
) -> FailureTag:
    bucket = None
    if bucket_pk is not None:
        bucket = FailureBucket.objects.filter(project=project, pk=bucket_pk).first()
        if bucket is None:
            raise ValidationError("Unknown failure bucket.")
    if item.project_id != project.pk:
        raise ValidationError("That item belongs to another project.")
    return FailureTag.objects.create(
        item=item,
        criterion=criterion,
        judge=judge,
        bucket=bucket,
        note=note.strip(),
        tagged_by=actor,
    )


def current_tags(project) -> dict[tuple[int, str, str], FailureTag]:
    """(item pk, criterion, judge) -> the latest tag."""
    latest: dict[tuple[int, str, str], FailureTag] = {}
    tags = FailureTag.objects.filter(item__project=project).select_related("bucket")
    for tag in tags.order_by("created_at", "pk"):
        latest[(tag.item_id, tag.criterion, tag.judge)] = tag
    return latest


def failure_summary(rows: list[dict], tags: dict, slices_of: dict[int, list[str]]) -> dict:
    """Counts per bucket and per bucket x slice, with up to three example items per bucket.

    `rows`: disagreements with `item_pk`, `item`, `criterion`, `judge`, `human`, `judged`.
    """
    per_bucket: Counter = Counter()
    per_slice: dict[str, Counter] = defaultdict(Counter)
    examples: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        tag = tags.get((row["item_pk"], row["criterion"], row["judge"]))
        bucket = tag.bucket.name if tag and tag.bucket else "untagged"
        per_bucket[bucket] += 1
        for slice_name in slices_of.get(row["item_pk"], []) or ["(no slice)"]:
            per_slice[bucket][slice_name] += 1
        if len(examples[bucket]) < 3:
            examples[bucket].append({**row, "note": tag.note if tag else ""})
    return {
        "per_bucket": per_bucket.most_common(),
        "per_slice": {k: dict(v) for k, v in per_slice.items()},
        "examples": dict(examples),
    }
