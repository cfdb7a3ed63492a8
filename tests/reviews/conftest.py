"""Fixtures the queue and batch tests share (test_workflow_queue.py, test_workflow_batches.py).

A module that needs another set of raters defines its own `raters`, which takes precedence.
"""

import pytest

from reviews.models import Role
from tests.factories import ItemFactory, member


@pytest.fixture
def items(project):
    """Five open items without questions (claiming does not look at questions)."""
    return [ItemFactory(project=project, external_id=f"item-{n}") for n in range(5)]


@pytest.fixture
def raters(project):
    return [member(project, Role.RATER, username=f"rater-{n}") for n in range(4)]
