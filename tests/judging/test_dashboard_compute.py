"""The dashboard snapshot's figures on a small hand-built project, checked by hand.

The project (imported as JSONL through `file_import`, the split set by hand so every item's side
is known):
- 200 held-out items h000..h199; the first 50 (h000..h049) are in the critical slice `safety`.
  20 calibration items c000..c019 (c000..c009 in `safety`).
- true label: even index `pass`, odd `fail`; raters ana and ben both give it on every item,
  except h190..h193, where ben says the opposite: those four tie (no final label, left out).
- two criteria with identical labels: `faithful` (critical) and `tone` (not critical).
- openai/gpt-4o, 3 samples: right everywhere except h000..h011, where two of its three samples
  are wrong (its majority is wrong: 12 disagreements, all on `safety`); on calibration it is
  wrong on c000..c003. anthropic/claude, 1 sample: always right.

By hand, on held-out (balanced labels, so chance agreement is 0.5 and kappa = 2 po - 1):
- gpt-4o: n = 196, 184 agree, kappa = 2 * 184/196 - 1 = 0.878; on `safety` n = 50, 38 agree,
  kappa = 2 * 0.76 - 1 = 0.52, below 0.6 even as a point estimate.
- claude: kappa 1 everywhere.
- panel `majority`, configured with both judges as members (two model groups, one vote
  each): on h000..h011 the groups disagree, a tie, left out:
  n = 184, kappa 1; on `safety` n = 38 < 50.

The data is imported once per module and rolled back; tests read the computed payloads.
"""

from __future__ import annotations

import pytest
from django.db import transaction

from judging.gates import GO, HOLD
from judging.models import GateSetting, ItemSplit, SplitDraw
from judging.services.calibration.panels import panel_configure
from judging.services.dashboard import dashboard_compute
from reviews.models import Item, Slice
from reviews.services.imports.pipeline import file_import
from tests.factories import ProjectFactory
from tests.judging.helpers import (
    criterion_record,
    human_record,
    item_record,
    verdict_record,
    write_jsonl,
)

GPT = {"provider": "openai", "model": "gpt-4o", "temperature": 0.2}
CLAUDE = {"provider": "anthropic", "model": "claude", "temperature": 0.0}
HELD, CAL, SAFETY_HELD, SAFETY_CAL = 200, 20, 50, 10
GPT_WRONG_HELD = {f"h{n:03d}" for n in range(12)}
GPT_WRONG_CAL = {f"c{n:03d}" for n in range(4)}
BEN_DIFFERS = {f"h{n:03d}" for n in range(190, 194)}
PANEL = "panel:majority"

# Marked so the test database is set up; the module fixture below builds in its own transaction.
pytestmark = pytest.mark.django_db


def flip(label: str) -> str:
    return "fail" if label == "pass" else "pass"


def _items() -> list[tuple[str, str, bool]]:
    """(external id, true label, in `safety`)."""
    held = [(f"h{n:03d}", "pass" if n % 2 == 0 else "fail", n < SAFETY_HELD) for n in range(HELD)]
    cal = [(f"c{n:03d}", "pass" if n % 2 == 0 else "fail", n < SAFETY_CAL) for n in range(CAL)]
    return held + cal


def records() -> list[dict]:
    out = [
        criterion_record(name="faithful", critical=True),
        criterion_record(name="tone", critical=False),
    ]
    for item_id, truth, safety in _items():
        out.append(item_record(item_id, slices=["safety"] if safety else []))
        wrong = item_id in GPT_WRONG_HELD or item_id in GPT_WRONG_CAL
        for criterion in ("faithful", "tone"):
            out.append(human_record(item_id, "ana", truth, criterion=criterion))
            ben = flip(truth) if item_id in BEN_DIFFERS else truth
            out.append(human_record(item_id, "ben", ben, criterion=criterion))
            samples = [flip(truth), flip(truth), truth] if wrong else [truth] * 3
            for sample, label in enumerate(samples):
                out.append(
                    verdict_record(
                        item_id,
                        label,
                        criterion=criterion,
                        judge=GPT,
                        sample=sample,
                        confidence=0.9 if label == truth else 0.6,
                    )
                )
            out.append(verdict_record(item_id, truth, criterion=criterion, judge=CLAUDE))
    return out


def build(project, folder):
    path = write_jsonl(folder / "calibration.jsonl", records())
    file_import(actor=None, project=project, path=path, format="jsonl")
    Slice.objects.filter(project=project, name="safety").update(critical=True)
    draw = SplitDraw.objects.create(project=project, seed=1, held_out_fraction=0.5)
    ItemSplit.objects.bulk_create(
        ItemSplit(
            item=item,
            draw=draw,
            split="held_out" if item.external_id.startswith("h") else "calibration",
        )
        for item in Item.objects.filter(project=project)
    )
    panel_configure(
        project=project,
        name="majority",
        rule="majority",
        members=["openai/gpt-4o", "anthropic/claude"],
    )


@pytest.fixture(scope="module")
def computed(django_db_setup, django_db_blocker, tmp_path_factory):
    """{"default": payload, "overridden": payload with GateSettings}; the data is rolled back."""
    with django_db_blocker.unblock(), transaction.atomic():
        project = ProjectFactory()
        build(project, tmp_path_factory.mktemp("dashboard-compute"))
        default = dashboard_compute(project)
        GateSetting.objects.create(project=project, criterion="faithful", min_n=30)
        GateSetting.objects.create(project=project, criterion="tone", min_lower=0.9)
        overridden = dashboard_compute(project)
        transaction.set_rollback(True)
    return {"default": default, "overridden": overridden}


@pytest.fixture
def payload(computed):
    return computed["default"]


def criterion(payload, name):
    (found,) = [c for c in payload["criteria"] if c["name"] == name]
    return found


def rows_by_judge(rows):
    return {row["judge"]: row for row in rows}


def decisions(payload):
    return {d["judge"]: d for d in payload["decisions"]}


def test_held_out_rows_match_the_hand_counts(payload):
    assert payload["split"] == "held_out" and payload["critical_slices"] == ["safety"]
    rows = rows_by_judge(criterion(payload, "faithful")["rows"])
    assert set(rows) == {"openai/gpt-4o", "anthropic/claude", PANEL}
    gpt, claude, panel = rows["openai/gpt-4o"], rows["anthropic/claude"], rows[PANEL]
    assert (gpt["n"], gpt["n_judged"], gpt["n_human"], gpt["human_ties_excluded"]) == (
        196,
        200,
        196,
        4,
    )
    assert gpt["confusion_matrix"]["counts"] == [[92, 6], [6, 92]]
    assert gpt["observed_agreement"]["value"] == pytest.approx(184 / 196)
    assert gpt["cohen_kappa"]["value"] == pytest.approx(2 * 184 / 196 - 1)
    low, high = gpt["cohen_kappa"]["ci"]
    assert 0.6 < low < gpt["cohen_kappa"]["value"] < high <= 1
    assert claude["n"] == 196 and claude["cohen_kappa"]["value"] == pytest.approx(1.0)
    assert (panel["n"], panel["ties_excluded"]) == (184, 12)
    assert panel["model_groups"] == ["anthropic/claude", "openai/gpt-4o"]
    assert panel["cohen_kappa"]["value"] == pytest.approx(1.0)
    assert [(m["ref"], m["missing"]) for m in panel["panel"]["members"]] == [
        ("openai/gpt-4o", 0),
        ("anthropic/claude", 0),
    ]
    assert all(row["gating"] for row in rows.values())


def test_per_slice_rows_count_only_the_slice_items(payload):
    slices = criterion(payload, "faithful")["slices"]
    assert set(slices) == {"safety"}
    rows = rows_by_judge(slices["safety"])
    gpt = rows["openai/gpt-4o"]
    assert gpt["n"] == SAFETY_HELD
    assert gpt["confusion_matrix"]["counts"] == [[19, 6], [6, 19]]
    assert gpt["cohen_kappa"]["value"] == pytest.approx(0.52)
    assert gpt["cohen_kappa"]["ci"][0] < 0.52
    assert rows["anthropic/claude"]["n"] == SAFETY_HELD
    assert rows["anthropic/claude"]["cohen_kappa"]["ci"] == [1.0, 1.0]
    assert rows[PANEL]["n"] == SAFETY_HELD - 12


def test_calibration_rows_are_separate_development_figures(payload):
    entry = criterion(payload, "faithful")
    cal = rows_by_judge(entry["calibration_rows"])
    assert cal["openai/gpt-4o"]["n"] == CAL
    assert cal["openai/gpt-4o"]["confusion_matrix"]["counts"] == [[8, 2], [2, 8]]
    assert cal["anthropic/claude"]["cohen_kappa"]["value"] == pytest.approx(1.0)
    # Calibration items never leak into the held-out figures or the disagreements.
    assert all(d["item"].startswith("h") for d in entry["disagreements"])


def test_a_critical_criterion_failing_on_a_critical_slice_holds_the_judge(payload):
    gate = rows_by_judge(criterion(payload, "faithful")["rows"])["openai/gpt-4o"]["gate"]
    assert gate["decision"] == HOLD
    assert gate["failing_slices"] == ["safety"]
    # The aggregate passes: every reason is about the slice.
    safety = rows_by_judge(criterion(payload, "faithful")["slices"]["safety"])
    low = safety["openai/gpt-4o"]["cohen_kappa"]["ci"][0]
    assert gate["reasons"] == [f"slice safety: Cohen's κ lower 95% bound {low:.2f} < 0.60"]
    held = decisions(payload)["openai/gpt-4o"]
    assert held == {
        "judge": "openai/gpt-4o",
        "judge_name": None,
        "judge_refs": ["openai/gpt-4o"],
        "label": "openai/gpt-4o",
        "decision": HOLD,
        "failing_criteria": ["faithful"],
        "failing": [{"criterion": "faithful", "reasons": gate["reasons"]}],
        "failing_slices": ["safety"],
    }


def test_the_same_numbers_on_a_non_critical_criterion_pass(payload):
    tone = rows_by_judge(criterion(payload, "tone")["rows"])
    faithful = rows_by_judge(criterion(payload, "faithful")["rows"])
    gpt = tone["openai/gpt-4o"]
    assert gpt["confusion_matrix"] == faithful["openai/gpt-4o"]["confusion_matrix"]
    assert gpt["cohen_kappa"] == faithful["openai/gpt-4o"]["cohen_kappa"]
    safety = rows_by_judge(criterion(payload, "tone")["slices"]["safety"])
    assert safety["openai/gpt-4o"]["cohen_kappa"]["value"] == pytest.approx(0.52)
    assert gpt["gate"]["decision"] == GO and gpt["gate"]["reasons"] == []
    assert gpt["gate"]["failing_slices"] == []
    assert "tone" not in decisions(payload)["openai/gpt-4o"]["failing_criteria"]


def test_release_decisions_per_judge_and_panel(payload):
    found = decisions(payload)
    assert list(found) == ["anthropic/claude", "openai/gpt-4o", PANEL]
    assert found["anthropic/claude"]["decision"] == GO
    assert found["anthropic/claude"]["failing_criteria"] == []
    # The panel agrees with people wherever it votes, but leaves 12 safety items out:
    # 38 < 50 held-out items on the critical slice.
    panel = rows_by_judge(criterion(payload, "faithful")["rows"])[PANEL]["gate"]
    assert panel["reasons"] == ["slice safety: held-out n = 38 < 50"]
    assert found[PANEL] == {
        "judge": PANEL,
        "judge_name": None,
        "judge_refs": [PANEL],
        "label": PANEL,
        "decision": HOLD,
        "failing_criteria": ["faithful"],
        "failing": [{"criterion": "faithful", "reasons": ["slice safety: held-out n = 38 < 50"]}],
        "failing_slices": ["safety"],
    }


def test_gate_settings_override_min_n_and_min_lower(computed):
    payload = computed["overridden"]
    faithful = criterion(payload, "faithful")
    assert faithful["gate"] == {
        "statistic": "cohen_kappa",
        "min_lower": 0.6,
        "min_n": 30,
        "max_ci_width": 0.3,
    }
    rows = rows_by_judge(faithful["rows"])
    assert rows[PANEL]["gate"]["decision"] == GO  # 38 >= 30 now
    assert rows["openai/gpt-4o"]["gate"]["decision"] == HOLD  # kappa still fails on safety
    tone = criterion(payload, "tone")
    assert (tone["gate"]["min_lower"], tone["gate"]["min_n"]) == (0.9, 50)
    tone_rows = rows_by_judge(tone["rows"])
    low = tone_rows["openai/gpt-4o"]["cohen_kappa"]["ci"][0]
    assert low < 0.9
    assert tone_rows["openai/gpt-4o"]["gate"]["reasons"] == [
        f"Cohen's κ lower 95% bound {low:.2f} < 0.90"
    ]
    assert tone_rows["anthropic/claude"]["gate"]["decision"] == GO  # kappa 1, CI [1, 1]
    found = decisions(payload)
    assert found[PANEL]["decision"] == GO
    assert found["anthropic/claude"]["decision"] == GO
    assert found["openai/gpt-4o"]["failing_criteria"] == ["faithful", "tone"]


def test_disagreements_are_exactly_where_the_judge_majority_differs_from_people(payload):
    entry = criterion(payload, "faithful")
    found = {(d["judge"], d["item"]): (d["human"], d["judged"]) for d in entry["disagreements"]}
    truth = {item_id: label for item_id, label, _ in _items()}
    # Not on calibration items, not on tied items, and one wrong sample in three is no
    # disagreement: only the majority counts.
    assert found == {("openai/gpt-4o", i): (truth[i], flip(truth[i])) for i in GPT_WRONG_HELD}
    assert all(d["criterion"] == "faithful" and d["version"] == "1" for d in entry["disagreements"])


def test_reliability_is_present_only_for_judges_that_gave_confidences(payload):
    reliability = criterion(payload, "faithful")["reliability"]
    assert set(reliability) == {"openai/gpt-4o"}  # claude gave no confidence
    gpt = reliability["openai/gpt-4o"]
    # Every held-out sample with a final human label (the four tied items have none).
    assert gpt["n"] == 3 * 196
    filled = [b for b in gpt["bins"] if b["count"]]
    (low,) = [b for b in filled if b["low"] <= 0.6 < b["high"]]
    (high,) = [b for b in filled if b["low"] <= 0.9 < b["high"]]
    # Wrong samples said 0.6 (two on each of h000..h011), right ones 0.9.
    assert (low["count"], low["accuracy"]) == (24, 0.0)
    assert (high["count"], high["accuracy"]) == (3 * 196 - 24, 1.0)
    assert len(filled) == 2
    assert gpt["ece"]["value"] == pytest.approx((24 * 0.6 + (3 * 196 - 24) * 0.1) / (3 * 196))


def test_rater_quality_for_two_raters(payload):
    """ana gives the truth; ben disagrees with her on h190..h193 (2 pass, 2 fail): those items
    tie (no final label), so each agrees with the final label wherever there is one, and their
    mutual kappa is over all 200 held-out items: po = 196/200, pe = 0.5, kappa = 0.96."""
    for name in ("faithful", "tone"):
        quality = {r["rater"]: r for r in criterion(payload, name)["rater_quality"]}
        assert set(quality) == {"ana", "ben"}
        for rater in ("ana", "ben"):
            row = quality[rater]
            assert row["n"] == HELD - 4
            assert row["agreement_with_final"]["value"] == pytest.approx(1.0)
            assert row["kappa_with_final"]["value"] == pytest.approx(1.0)
            assert row["mean_kappa_with_raters"] == pytest.approx(0.96)
    pair = {h["kind"]: h for h in criterion(payload, "faithful")["human_human"]}["rater_pair"]
    assert (pair["raters"], pair["n"]) == (["ana", "ben"], HELD)
    assert pair["cohen_kappa"]["value"] == pytest.approx(0.96)
