"""Separation of duties: who had a hand in an item's values and so may not sign them.

An item's ground truth is signed by an approver who did not make it: not a rater of the item
(any of them, not only a lone one), not an adjudicator of one of its questions (a decision later
corrected included), and not whoever set up the generation that wrote its generated reference
(started the run, or configured one of its readers). Judging records the latter on the item's
`generated` timeline events (reviews' own rows), so this reads them without knowing judging.
"""

from __future__ import annotations

from reviews.models import Answer, Event, EventKind, Resolution


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


def approval_conflicts(item, user) -> list[str]:
    """Why `user` may not approve `item` under separation of duties (empty: no conflict)."""
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
    return reasons
