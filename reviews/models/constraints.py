"""Check constraints that several models' tables share."""

from django.db import models
from django.db.models import Q


def fraction_check(
    field: str, name: str, *, open_ends=False, nullable=False
) -> models.CheckConstraint:
    """`field` is a fraction: in [0, 1] ((0, 1) with `open_ends`), or NULL when `nullable`."""
    low, high = ("gt", "lt") if open_ends else ("gte", "lte")
    condition = Q(**{f"{field}__{low}": 0}) & Q(**{f"{field}__{high}": 1})
    if nullable:
        condition = Q(**{f"{field}__isnull": True}) | condition
    return models.CheckConstraint(condition=condition, name=name)
