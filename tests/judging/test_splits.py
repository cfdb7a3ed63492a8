"""The calibration / held-out split: seeded, stratified by slice, frozen once labelled."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judging.models import Criterion, HeldOutAccess, HumanLabel, ItemSplit, Split
from judging.reports.agreement.report import agreement_report
from judging.services.calibration import splits
from judging.services.calibration.splits import (
    SplitError,
    SplitFrozen,
    held_out_count,
    split_draw,
    split_extend,
)
from reviews.models import Decision, Question, QuestionKind, Resolution, Slice
from tests.factories import ItemFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def make_items(project, sizes: dict[tuple[str, ...], int], prefix="item"):
    """`sizes`: slice-name tuple -> how many items carry exactly those slices."""
    items = []
    for names, count in sizes.items():
        slices = [Slice.objects.get_or_create(project=project, name=n)[0] for n in names]
        for _ in range(count):
            item = ItemFactory(project=project, external_id=f"{prefix}-{len(items):03d}")
            item.slices.set(slices)
            items.append(item)
    return items


def assignment(project) -> dict[str, str]:
    return dict(
        ItemSplit.objects.filter(item__project=project).values_list("item__external_id", "split")
    )


def held_out_by_stratum(project, items) -> dict[tuple[str, ...], int]:
    split = assignment(project)
    counts: dict[tuple[str, ...], int] = {}
    for item in items:
        key = tuple(sorted(s.name for s in item.slices.all()))
        counts[key] = counts.get(key, 0) + (split[item.external_id] == Split.HELD_OUT)
    return counts


SIZES = {("a",): 10, ("a", "b"): 6, (): 5}


def test_the_same_seed_draws_the_same_split(project):
    make_items(project, SIZES)
    split_draw(actor=None, project=project, seed=7)
    first = assignment(project)
    split_draw(actor=None, project=project, seed=7)  # nothing labelled yet: a redraw is allowed
    assert assignment(project) == first
    split_draw(actor=None, project=project, seed=8)
    assert assignment(project) != first


def test_the_split_depends_on_external_ids_not_on_insertion_order(project):
    make_items(project, {(): 12})
    other = ProjectFactory()
    for n in reversed(range(12)):
        ItemFactory(project=other, external_id=f"item-{n:03d}")
    split_draw(actor=None, project=project, seed=3)
    split_draw(actor=None, project=other, seed=3)
    assert assignment(project) == assignment(other)


def test_each_slice_stratum_is_split_in_proportion(project):
    items = make_items(project, SIZES)
    split_draw(actor=None, project=project, seed=1)
    # round(n * 0.5) with halves up: 10 -> 5, 6 -> 3, 5 -> 3
    assert held_out_by_stratum(project, items) == {("a",): 5, ("a", "b"): 3, (): 3}
    assert held_out_count(5, 0.5) == 3 and held_out_count(7, 0.3) == 2


def test_the_split_is_frozen_once_a_held_out_item_has_an_imported_label(project):
    make_items(project, {(): 6})
    split_draw(actor=None, project=project, seed=1)
    held = ItemSplit.objects.filter(split=Split.HELD_OUT).first().item
    criterion = Criterion.objects.create(project=project, name="c", labels=["x", "y"], sha256="0")
    HumanLabel.objects.create(item=held, criterion=criterion, rater="ana", label="x")
    before = assignment(project)
    with pytest.raises(SplitFrozen, match="frozen: 1 held-out items already have human labels"):
        split_draw(actor=None, project=project, seed=2)
    assert assignment(project) == before


def test_a_resolution_freezes_the_split_too(project):
    make_items(project, {(): 4})
    split_draw(actor=None, project=project, seed=1)
    held = ItemSplit.objects.filter(split=Split.HELD_OUT).first().item
    question = Question.objects.create(
        item=held, kind=QuestionKind.CRITERION, key="c", labels=["x", "y"]
    )
    Resolution.objects.create(
        question=question, decision=Decision.LABEL, value="x", method=Resolution.Method.ADJUDICATED
    )
    with pytest.raises(SplitFrozen):
        split_draw(actor=None, project=project, seed=2)


def test_labels_on_calibration_items_do_not_freeze(project):
    make_items(project, {(): 4})
    split_draw(actor=None, project=project, seed=1)
    calibration = ItemSplit.objects.filter(split=Split.CALIBRATION).first().item
    criterion = Criterion.objects.create(project=project, name="c", labels=["x", "y"], sha256="0")
    HumanLabel.objects.create(item=calibration, criterion=criterion, rater="ana", label="x")
    split_draw(actor=None, project=project, seed=2)


def test_late_items_join_the_draw_deterministically_and_keep_strata_balanced(project):
    items = make_items(project, {("a",): 4})
    split_draw(actor=None, project=project, seed=5)
    late = make_items(project, {("a",): 4}, prefix="late")
    assert split_extend(project=project) == 4
    assert split_extend(project=project) == 0  # assignments never change once written
    rows = ItemSplit.objects.filter(item__in=late)
    assert rows.count() == 4 and all(row.late for row in rows)
    assert held_out_by_stratum(project, items + late) == {("a",): 4}
    again = ProjectFactory()
    make_items(again, {("a",): 4})
    split_draw(actor=None, project=again, seed=5)
    make_items(again, {("a",): 4}, prefix="late")
    split_extend(project=again)
    assert assignment(again) == assignment(project)


def test_fraction_must_be_strictly_between_0_and_1(project):
    with pytest.raises(SplitError):
        split_draw(actor=None, project=project, seed=1, held_out_fraction=1.0)


@pytest.mark.parametrize("seed", [2**63, -(2**63) - 1])
def test_a_seed_past_64_bits_is_refused_naming_it(project, seed):
    make_items(project, {(): 4})
    with pytest.raises(SplitError, match="seed: .* 64 bits"):
        split_draw(actor=None, project=project, seed=seed)
    assert not ItemSplit.objects.exists()
    assert split_draw(actor=None, project=project, seed=2**63 - 1).seed == 2**63 - 1


def test_reading_held_out_figures_is_logged(project):
    make_items(project, {(): 4})
    split_draw(actor=None, project=project, seed=1)
    reader = UserFactory()
    agreement_report(actor=reader, project=project, split="held_out", n_resamples=10)
    agreement_report(actor=None, project=project, split="all", n_resamples=10)
    agreement_report(actor=reader, project=project, split="calibration", n_resamples=10)
    rows = list(HeldOutAccess.objects.filter(project=project).order_by("pk"))
    assert [(row.user, row.what) for row in rows] == [
        (reader, "agreement report, split held_out"),
        (None, "agreement report, split all"),
    ]


def test_split_draw_command(project, capsys):
    make_items(project, {(): 5})
    call_command("split_draw", "--project", project.slug, "--seed", "4")
    assert "3 held-out, 2 calibration items (seed 4)" in capsys.readouterr().out
    with pytest.raises(CommandError, match="between 0 and 1"):
        call_command(
            "split_draw", "--project", project.slug, "--seed", "4", "--held-out-fraction", "0"
        )


def test_late_rows_are_worked_out_first_then_written_in_short_transactions(project, monkeypatch):
    """A dashboard recompute after a large import must not hold SQLite's one write lock while
    it reads and sorts every item (issue 26, F4): the reads come before any transaction, then
    each chunk of rows is its own transaction, and the split is the same as in one go."""
    monkeypatch.setattr(splits, "LATE_CHUNK", 3)
    make_items(project, {("a",): 4})
    split_draw(actor=None, project=project, seed=5)
    make_items(project, {("a",): 7, (): 2}, prefix="late")
    with CaptureQueriesContext(connection) as captured:
        assert split_extend(project=project) == 9
    sql = [query["sql"] for query in captured.captured_queries]
    inserts = [
        i for i, text in enumerate(sql) if text.startswith('INSERT INTO "judging_itemsplit"')
    ]
    opened = [i for i, text in enumerate(sql) if text.startswith("SAVEPOINT")]
    read = max(i for i, text in enumerate(sql) if '"reviews_item_slices"' in text)
    assert len(inserts) == 3 and len(opened) == 3
    assert read < opened[0]  # the work-out reads no row inside a transaction
    assert opened[0] < inserts[0] < opened[1] < inserts[1] < opened[2] < inserts[2]

    once = ProjectFactory()
    make_items(once, {("a",): 4})
    split_draw(actor=None, project=once, seed=5)
    make_items(once, {("a",): 7, (): 2}, prefix="late")
    monkeypatch.setattr(splits, "LATE_CHUNK", 2000)
    split_extend(project=once)
    assert assignment(once) == assignment(project)


def test_a_late_item_drawn_by_another_extend_meanwhile_is_not_drawn_twice(project, monkeypatch):
    make_items(project, {("a",): 4})
    draw = split_draw(actor=None, project=project, seed=5)
    make_items(project, {("a",): 5}, prefix="late")
    worked_out = splits._late_rows
    sizes = []

    def another_extend_first(project, draw):
        known, rows = worked_out(project, draw)
        if not sizes:  # another recompute writes one of them between work-out and write
            ItemSplit.objects.create(item_id=rows[0].item_id, draw=draw, split=rows[0].split)
        sizes.append(len(rows))
        return known, rows

    monkeypatch.setattr(splits, "_late_rows", another_extend_first)
    assert split_extend(project=project) == 4
    assert sizes == [5, 4]
    assert ItemSplit.objects.filter(item__project=project, draw=draw).count() == 9
