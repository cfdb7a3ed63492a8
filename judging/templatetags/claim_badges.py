"""`{{ c.decision|claim_badge }}`: the badge colour of a claim judge's decision (one place for
it, named by the reply format's decisions rather than strings in the template)."""

from django import template

from judging.formats.replies import PREDICTED_DECISIONS, REFERENCE_DECISIONS

register = template.Library()

# The first decision of each side holds up, the second fails; the rest (undecidable) warn.
_CLASSES = {
    PREDICTED_DECISIONS[0]: "badge-ok",
    REFERENCE_DECISIONS[0]: "badge-ok",
    PREDICTED_DECISIONS[1]: "badge-bad",
    REFERENCE_DECISIONS[1]: "badge-bad",
}


@register.filter
def claim_badge(decision: str) -> str:
    return _CLASSES.get(decision, "badge-warn")
