"""`manage.py leaderboard`: Bradley-Terry strengths of the systems a pairwise criterion's A/B
items compare, from people, a judge or both, with each judge's position-consistency."""

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from judging.metrics.bradley_terry import Comparisons, fit
from reviews.services.imports.pipeline import file_import
from tests.judging.helpers import JUDGE, human_record, item_record, write_jsonl

pytestmark = pytest.mark.django_db
SYSTEMS = ["v1", "v2", "v3"]
FLIP = {"A": "B", "B": "A", "tie": "tie"}


def tournament(project, folder):
    """30 A/B items over three systems; people's label and a judge that sees both orders and,
    on every third item, picks whatever it was shown first. Returns the people's comparisons."""
    rng = np.random.default_rng(5)
    records = [{"type": "criterion", "name": "pref", "labels": ["A", "B", "tie"], "pairwise": True}]
    human = []
    for n in range(30):
        a, b = rng.choice(SYSTEMS, size=2, replace=False)
        item_id = f"p{n:02d}"
        better = ["A", "B", "tie"][n % 3] if n % 5 else ("A" if a > b else "B")
        human.append((SYSTEMS.index(a), SYSTEMS.index(b), {"A": 1.0, "B": 0.0, "tie": 0.5}[better]))
        records.append(item_record(item_id, metadata={"system_a": str(a), "system_b": str(b)}))
        records.append(human_record(item_id, "ana", better, criterion="pref"))
        for order in (["A", "B"], ["B", "A"]):
            winner = order[0] if n % 3 == 0 else better
            records.append(
                {
                    "type": "pairwise_verdict",
                    "item_id": item_id,
                    "criterion": "pref",
                    "answer_a": "first answer",
                    "answer_b": "second answer",
                    "display_order": order,
                    "winner": winner,
                    "judge": JUDGE,
                }
            )
    records.append(item_record("loose", metadata={}))  # names no systems
    file_import(actor=None, project=project, path=write_jsonl(folder / "p.jsonl", records))
    return Comparisons.of(len(SYSTEMS), human)


def leaderboard(project, *args, fmt="json"):
    out = StringIO()
    call_command(
        "leaderboard",
        "--project",
        project.slug,
        "--criterion",
        "pref",
        "--format",
        fmt,
        *args,
        stdout=out,
    )
    return json.loads(out.getvalue()) if fmt == "json" else out.getvalue()


def test_human_strengths_are_the_fit_of_the_final_labels(project, tmp_path):
    human = tournament(project, tmp_path)
    report = leaderboard(project, "--source", "human", "--seed", "4")
    expected = dict(zip(SYSTEMS, fit(human), strict=True))
    assert report["comparisons"] == 30 and report["items_without_systems"] == 1
    by_name = {row["system"]: row for row in report["systems"]}
    for name, value in expected.items():
        strength = by_name[name]["strength"]
        assert strength["value"] == pytest.approx(value, abs=1e-9)
        assert strength["ci"][0] < value < strength["ci"][1]
    assert [r["system"] for r in report["systems"]] == sorted(expected, key=lambda s: -expected[s])
    assert sum(r["wins"] for r in report["systems"]) == sum(r["losses"] for r in report["systems"])
    assert leaderboard(project, "--source", "human", "--seed", "4") == report  # seeded


def test_judge_and_both_count_every_verdict_and_show_its_consistency(project, tmp_path):
    tournament(project, tmp_path)
    judge = leaderboard(project, "--source", "judge", "--judge", "openai/gpt-4o")
    both = leaderboard(project, "--judge", "openai/gpt-4o")
    assert (judge["comparisons"], both["comparisons"]) == (60, 90)
    assert judge["source"] == "judge" and both["source"] == "both"
    # every third item (0, 3, ..., 27: 10 of 30) flips with the display order, unless its
    # label is the one shown first in both orders: a tie never is, so all 10 are inconsistent
    (row,) = judge["judges"]
    assert row["judge"] == "openai/gpt-4o"
    assert row["position_consistency"]["value"] == pytest.approx(20 / 30)
    markdown = leaderboard(project, "--judge", "openai/gpt-4o", fmt="markdown")
    assert "| openai/gpt-4o | 0.667 |" in markdown and "| v1 |" in markdown


def test_refusals_name_what_is_missing(project, tmp_path):
    tournament(project, tmp_path)
    with pytest.raises(CommandError, match="needs --judge"):
        leaderboard(project, "--source", "judge")
    with pytest.raises(CommandError, match="no criterion 'nope'"):
        call_command("leaderboard", "--project", project.slug, "--criterion", "nope")
