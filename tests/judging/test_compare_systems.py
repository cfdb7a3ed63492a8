"""`manage.py compare_systems`: each system's PPI++ and the paired difference, against
ppi-python on the pairs' differences."""

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from reviews.services.imports.pipeline import file_import
from tests.judging.helpers import (
    criterion_record,
    human_record,
    item_record,
    verdict_record,
    write_jsonl,
)

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
N_INPUTS, N_LABELLED = 150, 40


def two_systems(project, folder):
    """v1 passes about 50%, v2 about 65% of the same inputs; a judge passing 90% of the good
    and 30% of the bad outputs; people labelled both outputs of N_LABELLED random inputs.
    Returns {system: (truth, judge)} by input, and the labelled inputs."""
    rng = np.random.default_rng(11)
    word = {True: "pass", False: "fail"}
    labelled = sorted(rng.choice(N_INPUTS, size=N_LABELLED, replace=False).tolist())
    records, truths = [criterion_record()], {}
    for system, rate in (("v1", 0.5), ("v2", 0.65)):
        truth = rng.random(N_INPUTS) < rate
        judge = np.where(truth, rng.random(N_INPUTS) < 0.9, rng.random(N_INPUTS) < 0.3)
        truths[system] = (truth.astype(float), judge.astype(float))
        for n in range(N_INPUTS):
            item_id = f"{system}-{n:03d}"
            records.append(item_record(item_id, metadata={"system": system, "input": f"q{n}"}))
            records.append(verdict_record(item_id, word[bool(judge[n])]))
            if n in labelled:
                records.append(human_record(item_id, "ana", word[bool(truth[n])]))
    records.append(item_record("v2-orphan", metadata={"system": "v2"}))  # no input key
    records.append(verdict_record("v2-orphan", "pass"))
    first = {"criterion": 0, "item": 1}
    records.sort(key=lambda r: first.get(r["type"], 2))
    file_import(actor=None, project=project, path=write_jsonl(folder / "s.jsonl", records))
    return truths, labelled


def compare(project, *args) -> dict:
    out = StringIO()
    call_command(
        "compare_systems",
        *("--project", project.slug, "--criterion", "faithful", "--judge", "openai/gpt-4o"),
        *("--a", "v2", "--b", "v1", "--pair-by", "input", "--format", "json"),
        *args,
        stdout=out,
    )
    return json.loads(out.getvalue())


def test_the_paired_difference_is_ppi_on_the_pairs_differences(project, tmp_path):
    truths, labelled = two_systems(project, tmp_path)
    report = compare(project, "--assume-random-labels")
    (y2, j2), (y1, j1) = truths["v2"], truths["v1"]
    d, dhat = (y2 - y1)[labelled], (j2 - j1)[labelled]
    rest = np.delete(j2 - j1, labelled)
    difference = report["difference"]
    assert (difference["n_labeled"], difference["n_unlabeled"]) == (
        N_LABELLED,
        N_INPUTS - N_LABELLED,
    )
    assert difference["ppi"]["value"] == pytest.approx(
        ppi_mean_pointestimate(d, dhat, rest)[0], abs=1e-9
    )
    low, high = ppi_mean_ci(d, dhat, rest, alpha=0.05)
    assert difference["ppi"]["ci"] == pytest.approx([low[0], high[0]], abs=1e-9)
    assert difference["judge_only"]["value"] == pytest.approx((j2 - j1).mean())
    assert difference["human_only"]["value"] == pytest.approx(d.mean())
    a = report["a"]
    assert (a["system"], a["n_items"], a["n_labeled"]) == ("v2", N_INPUTS, N_LABELLED)
    low, high = ppi_mean_ci(y2[labelled], j2[labelled], np.delete(j2, labelled), alpha=0.05)
    assert a["ppi"]["ci"] == pytest.approx([low[0], high[0]], abs=1e-9)
    assert report["pairs_left_out"] == {"no_pair_key": 1, "duplicate_pair_key": 0, "unmatched": 0}
    drivers = report["drivers"]
    assert drivers and all(row["judge"][0] != row["judge"][1] for row in drivers)
    disagreeing = [
        r for r in drivers if r["human"] and r["human_difference"] != r["judge_difference"]
    ]
    assert drivers[: len(disagreeing)] == disagreeing  # where people correct the judge, first


def test_refusals(project, tmp_path):
    two_systems(project, tmp_path)
    with pytest.raises(CommandError, match="no known selection"):
        compare(project)
    with pytest.raises(CommandError, match="no judged item belongs to system 'v9'"):
        call_command(
            "compare_systems",
            *("--project", project.slug, "--criterion", "faithful", "--judge", "openai/gpt-4o"),
            *("--a", "v9", "--b", "v1", "--pair-by", "input", "--assume-random-labels"),
        )


def test_markdown_lists_both_systems_the_difference_and_the_drivers(project, tmp_path):
    two_systems(project, tmp_path)
    out = StringIO()
    call_command(
        "compare_systems",
        *("--project", project.slug, "--criterion", "faithful", "--judge", "openai/gpt-4o"),
        *("--a", "v2", "--b", "v1", "--pair-by", "input", "--assume-random-labels"),
        stdout=out,
    )
    text = out.getvalue()
    for words in ("| A: v2 |", "| B: v1 |", "| A − B (paired) |", "judge (A, B)", "no pair key 1"):
        assert words in text
