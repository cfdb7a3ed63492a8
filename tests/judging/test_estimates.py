"""`manage.py estimate`: PPI++ against ppi-python on an imported project, and which human labels
may be used (random draws only; imported ones only when assumed random)."""

import json
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from ppi_py.ppi import _calc_lam_glm

from judging.models import Criterion, HeldOutAccess, LabelRequest
from judging.services.calibration.send_to_humans import items_send_to_humans
from judging.services.calibration.splits import split_draw
from reviews.models import Decision, Item, Question, QuestionKind, Resolution
from reviews.services.imports.pipeline import file_import
from tests.judging.helpers import (
    criterion_record,
    human_record,
    item_record,
    verdict_record,
    write_jsonl,
)

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
N_ITEMS, N_LABELLED = 300, 40


def biased_project(project, folder, *, seed=3, imported_labels=True):
    """N_ITEMS items whose true rate is about 0.6, a judge that passes 90% of the good and 30%
    of the bad, and N_LABELLED imported human labels on items placed at random (if asked).
    Returns (truth, judge, labelled)."""
    rng = np.random.default_rng(seed)
    truth = rng.random(N_ITEMS) < 0.6
    judge = np.where(truth, rng.random(N_ITEMS) < 0.9, rng.random(N_ITEMS) < 0.3)
    labelled = sorted(rng.choice(N_ITEMS, size=N_LABELLED, replace=False).tolist())
    word = {True: "pass", False: "fail"}
    records = [criterion_record()]
    records += [item_record(f"i{n:03d}") for n in range(N_ITEMS)]
    records += [verdict_record(f"i{n:03d}", word[bool(judge[n])]) for n in range(N_ITEMS)]
    if imported_labels:
        records += [human_record(f"i{n:03d}", "ana", word[bool(truth[n])]) for n in labelled]
    file_import(actor=None, project=project, path=write_jsonl(folder / "p.jsonl", records))
    return truth.astype(float), judge.astype(float), labelled


def estimate(project, *args) -> dict:
    out = StringIO()
    call_command(
        "estimate",
        "--project",
        project.slug,
        "--criterion",
        "faithful",
        "--judge",
        "openai/gpt-4o",
        "--format",
        "json",
        *args,
        stdout=out,
    )
    return json.loads(out.getvalue())


def test_imported_labels_assumed_random_match_ppi_python(project, tmp_path):
    truth, judge, labelled = biased_project(project, tmp_path)
    report = estimate(project, "--assume-random-labels")
    (entry,) = report["estimates"]
    unlabelled = np.delete(judge, labelled)
    y, yhat = truth[labelled], judge[labelled]
    assert (entry["criterion"], entry["judge"]) == ("faithful", "openai/gpt-4o")
    assert (entry["n_labeled"], entry["n_unlabeled"]) == (N_LABELLED, N_ITEMS - N_LABELLED)
    assert entry["ppi"]["value"] == pytest.approx(
        ppi_mean_pointestimate(y, yhat, unlabelled)[0], abs=1e-9
    )
    low, high = ppi_mean_ci(y, yhat, unlabelled, alpha=0.05)
    assert entry["ppi"]["ci"] == pytest.approx([low[0], high[0]], abs=1e-9)
    assert entry["human_only"]["ci"] == pytest.approx(classical_mean_ci(y, alpha=0.05), abs=1e-9)
    assert entry["judge_only"]["value"] == pytest.approx(judge.mean(), abs=1e-12)
    assert entry["judge_only"]["ci"] == pytest.approx(
        classical_mean_ci(judge, alpha=0.05), abs=1e-9
    )
    centre = unlabelled.mean() + (y - yhat).mean()
    lam = _calc_lam_glm(y - centre, yhat - centre, unlabelled - centre, np.eye(1), clip=True)
    assert entry["lambda"] == pytest.approx(lam, abs=1e-9)
    selection = entry["label_selection"]
    assert selection["assumed_random_labels"] is True
    assert selection["used"] == {"held_out": 0, "calibration_sample": 0, "unknown": N_LABELLED}
    assert "ASSUMED" in selection["note"]
    assert HeldOutAccess.objects.filter(project=project, what__startswith="estimate").exists()


def test_alpha_is_the_interval_level(project, tmp_path):
    truth, judge, labelled = biased_project(project, tmp_path)
    entry = estimate(project, "--assume-random-labels", "--alpha", "0.1")["estimates"][0]
    low, high = ppi_mean_ci(truth[labelled], judge[labelled], np.delete(judge, labelled), alpha=0.1)
    assert entry["ppi"]["ci"] == pytest.approx([low[0], high[0]], abs=1e-9)


def test_imported_labels_are_refused_without_the_assumption(project, tmp_path):
    biased_project(project, tmp_path)
    with pytest.raises(
        CommandError, match=r"40 human label\(s\) on 'faithful' have no known selection"
    ):
        estimate(project)
    assert not HeldOutAccess.objects.filter(project=project).exists()


def resolve(criterion, item_ids, truth):
    """Settle the criterion questions of these items with their true label."""
    for question in Question.objects.filter(item_id__in=list(item_ids), key=criterion.name):
        n = int(question.item.external_id[1:])
        Resolution.objects.create(
            question=question,
            decision=Decision.LABEL,
            value="pass" if truth[n] else "fail",
            method=Resolution.Method.MAJORITY,
        )


def test_only_random_draws_count_and_selected_labels_are_left_out(project, tmp_path):
    truth, judge, _ = biased_project(project, tmp_path, imported_labels=False)
    faithful = Criterion.objects.get(project=project, name="faithful")
    split_draw(actor=None, project=project, seed=5)
    chosen = list(
        Item.objects.filter(project=project, external_id__lt="i010").values_list("pk", flat=True)
    )
    items_send_to_humans(
        actor=None, project=project, criterion=faithful, selection="chosen", item_ids=chosen
    )
    items_send_to_humans(
        actor=None,
        project=project,
        criterion=faithful,
        selection="calibration_sample",
        n=30,
        seed=9,
    )
    sampled = LabelRequest.objects.filter(selection="calibration_sample")
    assert sampled.count() == 30 and {(r.seed, r.sample_size) for r in sampled} == {(9, 30)}
    sample = set(sampled.values_list("item_id", flat=True))
    awaiting = sorted(sample - set(chosen))[:2]
    resolve(faithful, set(chosen) | sample - set(awaiting), truth)

    entry = estimate(project)["estimates"][0]  # every label's selection is known

    random_labelled = sample - set(awaiting)
    assert entry["n_labeled"] == len(random_labelled)
    assert entry["n_unlabeled"] == N_ITEMS - len(random_labelled)
    selection = entry["label_selection"]
    assert selection["assumed_random_labels"] is False
    assert selection["used"] == {"held_out": 0, "calibration_sample": len(random_labelled)}
    assert selection["left_out"]["chosen"] == len(set(chosen) - sample) > 0
    assert selection["awaiting_labels"] == 2
    numbers = {pk: int(e[1:]) for pk, e in Item.objects.values_list("pk", "external_id")}
    labelled = sorted(numbers[pk] for pk in random_labelled)
    low, high = ppi_mean_ci(
        truth[labelled], judge[labelled], np.delete(judge, labelled), alpha=0.05
    )
    assert entry["ppi"]["ci"] == pytest.approx([low[0], high[0]], abs=1e-9)


def test_a_label_asked_outside_send_to_humans_has_no_known_selection(project, tmp_path):
    truth, _, _ = biased_project(project, tmp_path, imported_labels=False)
    faithful = Criterion.objects.get(project=project, name="faithful")
    for item in Item.objects.filter(project=project, external_id__lt="i005"):
        Question.objects.create(
            item=item, kind=QuestionKind.CRITERION, key="faithful", criterion_version="1"
        )
    resolve(faithful, Item.objects.filter(project=project).values_list("pk", flat=True), truth)
    with pytest.raises(CommandError, match=r"5 human label\(s\) .* no known selection"):
        estimate(project)
    entry = estimate(project, "--assume-random-labels")["estimates"][0]
    assert entry["n_labeled"] == 5


def test_refusals_name_what_is_wrong(project, tmp_path):
    biased_project(project, tmp_path)
    with pytest.raises(CommandError, match="no criterion 'nope'.*criteria: faithful"):
        call_command("estimate", "--project", project.slug, "--criterion", "nope", "--judge", "x/y")
    with pytest.raises(CommandError, match="no imported judge 'x/y'"):
        call_command(
            "estimate", "--project", project.slug, "--criterion", "faithful", "--judge", "x/y"
        )
    with pytest.raises(CommandError, match="no split has been drawn"):
        estimate(project, "--split", "held_out", "--assume-random-labels")
    with pytest.raises(CommandError, match="no slice 'safety'"):
        estimate(project, "--slice", "safety", "--assume-random-labels")
    with pytest.raises(CommandError, match="alpha must be between 0 and 0.5"):
        estimate(project, "--alpha", "0.7", "--assume-random-labels")


def test_markdown_names_the_three_figures_and_the_assumption(project, tmp_path):
    biased_project(project, tmp_path)
    out = StringIO()
    call_command(
        "estimate",
        "--project",
        project.slug,
        "--criterion",
        "faithful",
        "--judge",
        "openai/gpt-4o",
        "--assume-random-labels",
        stdout=out,
    )
    text = out.getvalue()
    for words in ("| PPI++ |", "| human only |", "| judge only |", "ASSUMED", "40 items labelled"):
        assert words in text


def test_half_width_says_how_many_more_random_labels(project, tmp_path):
    biased_project(project, tmp_path)
    entry = estimate(project, "--assume-random-labels", "--half-width", "0.08")["estimates"][0]
    needed = entry["labels_needed"]
    assert needed["half_width"] == 0.08
    assert 0 < needed["ppi"]["more"] < needed["human_only"]["more"]
    assert needed["ppi"]["total"] == N_LABELLED + needed["ppi"]["more"]
    assert "λ re-tuned" in needed["ppi"]["method"]


def test_the_worked_example_of_docs_estimates_md(project):
    """docs/estimates.md's figures are what the command prints for its example file."""
    from tests.judging.helpers import EXAMPLES

    file_import(actor=None, project=project, path=EXAMPLES / "true-score.jsonl")
    entry = estimate(project, "--assume-random-labels", "--half-width", "0.05")["estimates"][0]
    shown = lambda f: f"{f['value']:.4f} [{f['ci'][0]:.4f}, {f['ci'][1]:.4f}]"  # noqa: E731
    doc = (Path(__file__).resolve().parents[2] / "docs" / "estimates.md").read_text()
    for key in ("ppi", "human_only", "judge_only"):
        assert shown(entry[key]) in doc
    assert f"λ {entry['lambda']:.4f}" in doc
    needed = entry["labels_needed"]
    assert f"label {needed['ppi']['more']} more at random (PPI++), against " in doc
    assert f"{needed['human_only']['more']} more for human only" in doc
