"""FORMATS §4 judging records (criterion, verdict, human_label, pairwise_verdict) imported."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging.models import Criterion, HumanLabel, Judge, Verdict
from judging.services.imports.batches import ItemLookup
from reviews.formats.errors import FormatError
from reviews.models import Item
from reviews.services.imports.pipeline import ImportContext
from tests.helpers import row_counts
from tests.judging.helpers import (
    EXAMPLES,
    JUDGE,
    criterion_record,
    human_record,
    import_items,
    item_record,
    verdict_record,
    write_jsonl,
)

pytestmark = pytest.mark.django_db


def refused(project, path, *args) -> str:
    """Import that must fail; returns the error text the command printed."""
    err = StringIO()
    with pytest.raises(CommandError, match="nothing was written"):
        call_command(
            "import_items",
            "--project",
            project.slug,
            str(path),
            *args,
            stdout=StringIO(),
            stderr=err,
        )
    return err.getvalue()


def test_example_file_imports_every_kind(project):
    out = import_items(project, EXAMPLES / "judging.jsonl")
    assert "imported 12 items" in out and "48 verdicts" in out and "24 human labels" in out
    faithful = Criterion.objects.get(project=project, name="faithful")
    assert (faithful.version, faithful.positive_label, faithful.critical) == ("2", "pass", True)
    assert len(faithful.sha256) == 64
    assert Criterion.objects.get(name="clarity").ordinal is True
    assert Verdict.objects.filter(criterion=faithful).count() == 36
    assert HumanLabel.objects.filter(rater="ana").count() == 12
    pairwise = Verdict.objects.filter(criterion__name="preference").select_related("item")
    assert pairwise.count() == 12
    mug1 = pairwise.get(item__external_id="mug-001")
    # display_order ["B", "A"], winner "tie" names the original answers, stored as such.
    assert (mug1.label, mug1.display_order) == ("tie", "BA")
    assert mug1.item.metadata["pairwise"]["preference"] == {"A": "baseline", "B": "candidate"}
    preference = Criterion.objects.get(name="preference")
    assert preference.pairwise and preference.labels == ["A", "B", "tie"]
    assert Judge.objects.filter(project=project).count() == 2


def test_reimporting_the_same_records_adds_nothing(project):
    import_items(project, EXAMPLES / "judging.jsonl")
    verdicts, labels = Verdict.objects.count(), HumanLabel.objects.count()
    import_items(project, EXAMPLES / "judging.jsonl")
    assert (Verdict.objects.count(), HumanLabel.objects.count()) == (verdicts, labels)


def test_label_outside_the_label_set_names_file_line_and_value(project, tmp_path):
    path = write_jsonl(
        tmp_path / "v.jsonl",
        [
            criterion_record(),
            item_record("i1"),
            verdict_record("i1", "maybe"),
        ],
    )
    before = row_counts()
    err = refused(project, path)
    assert "v.jsonl, line 3, $.label" in err and "'maybe'" in err and "--clip" in err
    assert row_counts() == before


def test_human_label_outside_the_label_set_is_refused(project, tmp_path):
    path = write_jsonl(
        tmp_path / "h.jsonl",
        [
            criterion_record(),
            item_record("i1"),
            human_record("i1", "ana", "PASS"),
        ],
    )
    before = row_counts()
    assert "h.jsonl, line 3" in refused(project, path)
    assert row_counts() == before


def test_unknown_criterion_is_refused(project, tmp_path):
    path = write_jsonl(
        tmp_path / "v.jsonl",
        [
            criterion_record(),
            item_record("i1"),
            verdict_record("i1", "pass", criterion="ghost"),
        ],
    )
    before = row_counts()
    err = refused(project, path)
    assert "v.jsonl, line 3, $.criterion" in err and "unknown criterion 'ghost'" in err
    assert row_counts() == before


def test_unknown_item_is_refused(project, tmp_path):
    path = write_jsonl(
        tmp_path / "v.jsonl",
        [
            criterion_record(),
            item_record("i1"),
            verdict_record("i1", "pass"),
            verdict_record("nope", "pass"),
        ],
    )
    before = row_counts()
    err = refused(project, path)
    assert "v.jsonl, line 4, $.item_id" in err and "unknown item 'nope'" in err
    assert row_counts() == before


def test_map_renames_labels_and_notes_it(project, tmp_path):
    path = write_jsonl(
        tmp_path / "v.jsonl",
        [
            criterion_record(),
            item_record("i1"),
            verdict_record("i1", "maybe"),
            human_record("i1", "ana", "PASS"),
        ],
    )
    out = import_items(project, path, "--map", "maybe=fail", "--map", "PASS=pass")
    assert "note: --map renamed 2 labels ('PASS' -> 'pass': 1, 'maybe' -> 'fail': 1)" in out
    assert Verdict.objects.get().label == "fail" and HumanLabel.objects.get().label == "pass"


def test_map_to_a_label_still_outside_the_set_is_refused(project, tmp_path):
    path = write_jsonl(
        tmp_path / "v.jsonl",
        [
            criterion_record(),
            item_record("i1"),
            verdict_record("i1", "maybe"),
        ],
    )
    before = row_counts()
    err = refused(project, path, "--map", "maybe=unsure")
    assert "'unsure' (renamed from 'maybe' by --map)" in err
    assert row_counts() == before


def test_clip_drops_records_outside_the_set_and_notes_it(project, tmp_path):
    path = write_jsonl(
        tmp_path / "v.jsonl",
        [
            criterion_record(),
            item_record("i1"),
            verdict_record("i1", "maybe"),
            verdict_record("i1", "pass", sample=1),
        ],
    )
    out = import_items(project, path, "--clip")
    assert "note: --clip dropped 1 records" in out and "verdict 'maybe' on 'faithful': 1" in out
    assert list(Verdict.objects.values_list("label", "sample")) == [("pass", 1)]


def test_a_different_definition_under_the_same_version_is_refused(project, tmp_path):
    import_items(project, write_jsonl(tmp_path / "a.jsonl", [criterion_record()]))
    changed = write_jsonl(
        tmp_path / "b.jsonl",
        [
            criterion_record(labels=["pass", "fail", "unsure"]),
        ],
    )
    before = row_counts()
    err = refused(project, changed)
    assert "b.jsonl, line 1, $.version" in err and "new version" in err
    assert row_counts() == before
    out = import_items(project, write_jsonl(tmp_path / "c.jsonl", [criterion_record()]))
    assert Criterion.objects.count() == 1 and "0 errors" in out


def test_verdicts_name_the_newest_version_unless_the_file_defines_one(project, tmp_path):
    import_items(
        project,
        write_jsonl(
            tmp_path / "a.jsonl",
            [
                criterion_record(),
                criterion_record(version="2", labels=["good", "bad"], positive="good"),
                item_record("i1"),
                verdict_record("i1", "good"),
            ],
        ),
    )
    assert Verdict.objects.get().criterion.version == "2"


def test_duplicate_rater_label_in_a_file_is_refused(project, tmp_path):
    path = write_jsonl(
        tmp_path / "h.jsonl",
        [
            criterion_record(),
            item_record("i1"),
            human_record("i1", "ana", "pass"),
            human_record("i1", "ana", "pass"),
        ],
    )
    before = row_counts()
    err = refused(project, path)
    assert "h.jsonl, line 4" in err and "twice (also line 3)" in err
    assert row_counts() == before


def test_a_changed_human_label_is_refused_on_reimport(project, tmp_path):
    import_items(
        project,
        write_jsonl(
            tmp_path / "a.jsonl",
            [
                criterion_record(),
                item_record("i1"),
                human_record("i1", "ana", "pass"),
            ],
        ),
    )
    before = row_counts()
    err = refused(project, write_jsonl(tmp_path / "b.jsonl", [human_record("i1", "ana", "fail")]))
    assert "never overwritten" in err
    assert row_counts() == before


def test_a_changed_verdict_is_refused(project, tmp_path):
    path = write_jsonl(
        tmp_path / "v.jsonl",
        [
            criterion_record(),
            item_record("i1"),
            verdict_record("i1", "pass"),
            verdict_record("i1", "fail"),
        ],
    )
    before = row_counts()
    err = refused(project, path)
    assert "v.jsonl, line 4" in err and "first given on line 3" in err
    assert row_counts() == before


def test_pairwise_verdict_needs_a_pairwise_criterion(project, tmp_path):
    path = write_jsonl(
        tmp_path / "p.jsonl",
        [
            criterion_record(),
            item_record("i1"),
            {
                "type": "pairwise_verdict",
                "item_id": "i1",
                "criterion": "faithful",
                "answer_a": "x",
                "answer_b": "y",
                "winner": "A",
                "judge": JUDGE,
            },
        ],
    )
    assert "is not pairwise" in refused(project, path)


def test_large_verdict_files_are_written_in_batches(
    project, tmp_path, django_assert_max_num_queries
):
    records = [criterion_record()] + [item_record(f"i{n}") for n in range(200)]
    records += [verdict_record(f"i{n}", "pass", sample=s) for n in range(200) for s in range(3)]
    path = write_jsonl(tmp_path / "big.jsonl", records)
    # 600 verdicts: a handful of queries per batch, not one (or more) per verdict.
    with django_assert_max_num_queries(40):
        import_items(project, path)
    assert Verdict.objects.count() == 600 and Item.objects.count() == 200


def test_the_item_lookup_keeps_only_the_last_batch(project):
    """2M verdicts on 1M items import with memory flat: the external id -> pk lookup keeps the
    batch in hand (and the ids given up front), not every item the file named so far."""
    items = {
        f"i{n}": Item.objects.create(project=project, external_id=f"i{n}").pk for n in range(5)
    }
    lookup = ItemLookup(ImportContext(actor=None, project=project, file="f", base_dir=None))
    assert lookup.resolve([("i0", "line 1"), ("i1", "line 2")]) == {
        "i0": items["i0"],
        "i1": items["i1"],
    }
    assert lookup.resolve([("i1", "line 3"), ("i2", "line 4")]) == {
        "i1": items["i1"],
        "i2": items["i2"],
    }
    assert lookup.pks.keys() == {"i1", "i2"}
    with pytest.raises(FormatError, match="unknown item 'i9'"):
        lookup.resolve([("i9", "line 5")])
    given = ItemLookup(
        ImportContext(actor=None, project=project, file="f", base_dir=None),
        known={"i4": items["i4"]},
    )
    assert given.resolve([("i3", "line 1")]) == {"i3": items["i3"], "i4": items["i4"]}
