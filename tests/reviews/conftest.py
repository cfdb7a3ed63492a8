"""What tests/reviews modules share: the queue and batch tests' items and raters
(test_workflow_queue.py, test_workflow_batches.py), gold items (test_gold_queue.py,
test_gold_batches.py), the demo evidence files as bytes (the evidence tests), an item waiting
for approval and one for adjudication (the approval and resolution tests), an approved item
built once per module (the append-only and admin tests), and assert rewriting for
bad_imports.py.

The sets of raters differ by test: `raters` (four), `approval_raters` (two, agreeing makes an
item resolved), `resolution_raters` (three, for the resolution rules). A module that defines its
own `raters` overrides the one here, and only in that module.
"""

import pytest

from reviews.demo import documents as demo_evidence
from reviews.models import ItemStatus, Role
from reviews.services.rating.quality import gold_mark
from tests import builders
from tests.factories import ItemFactory, ProjectFactory, member
from tests.helpers import per_test_copy

# The one field of the gold tests' items: two candidates, rated "1290" to make it gold.
TOTAL = {"$.total": ["1,200.00", "1,290.00"]}

# Its asserts are the bad-import tests' own: pytest explains them as it does a test's.
pytest.register_assert_rewrite("tests.reviews.bad_imports")


@pytest.fixture
def items(project):
    """Five open items without questions (claiming does not look at questions)."""
    return [ItemFactory(project=project, external_id=f"item-{n}") for n in range(5)]


@pytest.fixture
def raters(project):
    """Four raters of `project`, rater-0 to rater-3."""
    return [member(project, Role.RATER, username=f"rater-{n}") for n in range(4)]


@pytest.fixture(scope="module")
def statement() -> bytes:
    """The demo bank statement: a three-page PDF."""
    return demo_evidence.statement_pdf()


@pytest.fixture(scope="module")
def receipt() -> bytes:
    """The demo receipt: a PNG."""
    return demo_evidence.receipt_png()


@pytest.fixture
def gold_project(db):
    return ProjectFactory(overlap=1)


@pytest.fixture
def make_gold(gold_project, review_item, rate):
    """make_gold(n) → n items rated "1290" by rita (overlap 1: resolved) and marked gold."""
    rita = member(gold_project, Role.RATER, username="rita")

    def make(n, **kwargs):
        items = []
        for _ in range(n):
            item = review_item(gold_project, TOTAL, **kwargs)
            rate(rita, item, {"$.total": "1290"})
            gold_mark(actor=None, item=item)
            items.append(item)
        return items

    make.rita = rita
    return make


@pytest.fixture
def approval_raters(project):
    """Two raters of `project`, rater-1 and rater-2: when both agree, an item is resolved."""
    return [member(project, Role.RATER, username=f"rater-{n}") for n in (1, 2)]


@pytest.fixture
def resolved(project, review_item, rate, approval_raters):
    """Two raters agreed on $.total (1,200.00 vs the generated candidates); rows: currency."""
    item = review_item(project, {"$.total": ["1,200.00", "1,290.00"]}, rows={"$.currency": "EUR"})
    for rater in approval_raters:
        rate(rater, item, {"$.total": "1,200.00"})
    item.refresh_from_db()
    assert item.status == ItemStatus.RESOLVED
    return item


@pytest.fixture
def resolution_raters(project):
    """Three raters of `project`, rater-1 to rater-3, for the resolution rules."""
    return [member(project, Role.RATER, username=f"rater-{n}") for n in (1, 2, 3)]


@pytest.fixture
def disputed(project, review_item, resolution_raters):
    """The $.total question of an item two raters answered 1200 and 1290: awaiting adjudication."""
    item, _ = builders.rated_item(project, review_item, resolution_raters, ["1200", "1290"])
    return item.questions.get()


@pytest.fixture(scope="module")
def module_approved_item(module_db):
    """One item taken through the whole workflow (builders.approved_item), built once per module."""
    return module_db.build(builders.approved_item)


# Every history table has rows: each test gets its own copy of the module's approved item.
approved_item = per_test_copy("module_approved_item")
