"""What tests/reviews modules share: the queue and batch tests' items and raters
(test_workflow_queue.py, test_workflow_batches.py), and assert rewriting for bad_imports.py.

A module that needs another set of raters defines its own `raters`, which takes precedence.
"""

import pytest

from reviews.models import Role
from tests.factories import ItemFactory, member

# Its asserts are the bad-import tests' own: pytest explains them as it does a test's.
pytest.register_assert_rewrite("tests.reviews.bad_imports")


@pytest.fixture
def items(project):
    """Five open items without questions (claiming does not look at questions)."""
    return [ItemFactory(project=project, external_id=f"item-{n}") for n in range(5)]


@pytest.fixture
def raters(project):
    return [member(project, Role.RATER, username=f"rater-{n}") for n in range(4)]
