"""Separation of duties: who had a hand in an item's values and so may not sign them.

An item's ground truth is signed by an approver who did not make it: not a rater of the item
(any of them, not only a lone one), not an adjudicator of one of its questions (a decision later
corrected included), not whoever set up the generation that wrote its generated reference
(started the run, or configured one of its readers), and not whoever imported that reference
(a file's values are its importer's: a reference CSV can say anything). Judging records the latter on the item's
`generated` timeline events (reviews' own rows), so this reads them without knowing judging.
"""

from __future__ import annotations

from reviews.models import Answer, Authority, Event, EventKind, Resolution
from reviews.services.approval.references import latest_reference


def rated(item, user) -> bool:
    """Any answer to the item's questions, submitted or not (gold checks aside: they never
    resolve it). A place without an answer gave the item no value."""
    answers = Answer.objects.filter(question__item=item, rater=user)
    return answers.exclude(assignment__gold=True).exists()


def adjudicated(item, user) -> bool:
    return Resolution.objects.filter(
        question__item=item, method=Resolution.Method.ADJUDICATED, decided_by=user
    ).exists()


def generation_configurers(item) -> set[int]:
    """Users who started a generation of this item or configured one of its readers."""
    users = set()
    events = Event.objects.filter(item=item, kind=EventKind.GENERATED).values_list("actor", "data")
    for actor, data in events:
        users.add(actor)
        readers = data.get("readers", []) if isinstance(data, dict) else []
        users.update(r.get("configured_by") for r in readers if isinstance(r, dict))
    users.discard(None)
    return users


def approval_conflicts(item, user, generated=None) -> list[str]:
    """Why `user` may not approve `item` under separation of duties (empty: no conflict).
    `generated`: the item's latest generated reference, the values an approval would sign
    (read here when the caller has not)."""
    generated = generated or latest_reference(item, Authority.GENERATED)
    reasons = []
    if rated(item, user):
        reasons.append(
            "You rated this item: another approver must approve it (separation of duties)."
        )
    if adjudicated(item, user):
        reasons.append(
            "You adjudicated this item: another approver must approve it (separation of duties)."
        )
    if user.pk in generation_configurers(item):
        reasons.append(
            "You set up the generation of this item's reference (started it or configured a "
            "reader): another approver must approve it (separation of duties)."
        )
    elif generated is not None and generated.created_by_id == user.pk:
        reasons.append(
            "You imported this item's generated reference: another approver must approve it "
            "(separation of duties)."
        )
    return reasons
