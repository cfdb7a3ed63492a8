"""`manage.py pass_at_k`: cases from a metadata key, passes from final human labels or from a
judge's labels, what is left out and counted, and the refusals."""

import json
from io import StringIO
from math import comb

import pytest
from django.core.management import CommandError, call_command

from tests.judging.helpers import (
    criterion_record,
    human_record,
    import_items,
    item_record,
    verdict_record,
    write_jsonl,
)

pytestmark = pytest.mark.django_db

# case -> the human labels of its samples (and the judge's, which passes one more in case b)
HUMAN = {"a": "PFFFP", "b": "FFFF", "c": "PPPP", "d": "PF"}
JUDGE = {"a": "PFFFP", "b": "PFFF", "c": "PPPP", "d": "PF"}


@pytest.fixture
def sampled(project, tmp_path):
    records = [criterion_record()]
    for case, labels in HUMAN.items():
        for i, human in enumerate(labels):
            item_id = f"{case}{i}"
            records.append(item_record(item_id, metadata={"case_id": case, "attempt": i}))
            records.append(human_record(item_id, "ana", "pass" if human == "P" else "fail"))
            judged = JUDGE[case][i]
            records.append(verdict_record(item_id, "pass" if judged == "P" else "fail"))
    records.append(item_record("loose"))  # no case_id: left out, counted
    records.append(item_record("e0", metadata={"case_id": "e"}))  # no label: counted
    import_items(project, write_jsonl(tmp_path / "samples.jsonl", records))
    return project


def run(project, *args):
    out = StringIO()
    call_command(
        "pass_at_k",
        "--project",
        project.slug,
        "--criterion",
        "faithful",
        "--group-by",
        "case_id",
        "--format",
        "json",
        *args,
        stdout=out,
    )
    return json.loads(out.getvalue())


def chen(n, c, k):
    return 1 - comb(n - c, k) / comb(n, k)


def test_human_labels_give_the_mean_of_the_unbiased_estimator(sampled):
    report = run(sampled, "--k", "1", "--k", "3")
    # d has 2 samples (< 3) and e none with a label: a, b and c count
    assert (report["cases"], report["excluded_cases"]) == (3, 1)
    assert (report["items_without_key"], report["unlabelled_samples"]) == (1, 1)
    expected = (chen(5, 2, 3) + chen(4, 0, 3) + chen(4, 4, 3)) / 3
    assert report["pass_at_k"]["3"]["value"] == pytest.approx(expected)
    assert report["pass_at_k"]["1"]["value"] == pytest.approx((2 / 5 + 0 + 1) / 3)
    low, high = report["pass_at_k"]["3"]["ci"]
    assert low <= expected <= high
    p = (2 / 5 + 0 + 1) / 3
    assert report["idealised"]["3"]["value"] == pytest.approx(1 - (1 - p) ** 3)
    assert report["labels_from"] == "final human label"
    assert [row["case"] for row in report["per_case"]] == ["a", "b", "c"]


def test_a_judges_labels_replace_the_human_ones(sampled):
    report = run(sampled, "--k", "2", "--judge", "openai/gpt-4o")
    assert report["labels_from"] == "judge openai/gpt-4o"
    expected = (chen(5, 2, 2) + chen(4, 1, 2) + chen(4, 4, 2) + chen(2, 1, 2)) / 4
    assert report["cases"] == 4
    assert report["pass_at_k"]["2"]["value"] == pytest.approx(expected)


def test_markdown_labels_the_idealised_figure(sampled):
    out = StringIO()
    call_command(
        "pass_at_k",
        *("--project", sampled.slug, "--criterion", "faithful", "--group-by", "case_id"),
        *("--k", "2"),
        stdout=out,
    )
    text = out.getvalue()
    assert "| k | pass@k [95% CI] | idealised 1-(1-p)^k |" in text
    assert "as if every attempt were independent" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", "0"], "at least 1"),
        (["--k", "1", "--judge", "nobody/none"], "no imported judge 'nobody/none'"),
        (["--k", "1", "--split", "held_out"], "no split has been drawn"),
    ],
)
def test_refusals_name_what_is_wrong(sampled, args, message):
    with pytest.raises(CommandError, match=message):
        run(sampled, *args)


def test_a_criterion_without_a_positive_label_is_refused(project, tmp_path):
    records = [criterion_record(labels=["1", "2", "3"], positive=None, ordinal=True)]
    import_items(project, write_jsonl(tmp_path / "c.jsonl", records))
    with pytest.raises(CommandError, match="has no positive label"):
        run(project, "--k", "1")
