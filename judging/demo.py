"""The judge-calibration demo: product descriptions graded by two LLM judges and two people.

Generated deterministically (seeded) as FORMATS §4 JSONL and loaded through the importer, so
the dashboards show what an import of real pipeline output shows. The numbers are built to
tell a story: `gpt-4o` agrees well with people overall, but not on safety-sensitive products,
where `faithful` is critical, so its release holds; `clarity` is ordinal (1-5).
"""

from __future__ import annotations

import hashlib
import json
import random
import tempfile
from pathlib import Path

from judging.services.calibration.panels import panel_configure
from judging.services.calibration.send_to_humans import items_send_to_humans
from judging.services.calibration.splits import current_draw, split_draw
from judging.services.imports.criteria import latest_criterion
from reviews.models import Project
from reviews.services.imports.pipeline import file_import
from reviews.services.items import slices_critical_set

SLUG = "judge-demo"
NAME = "Product descriptions (judge calibration)"
ITEMS = 240
SEED = 20261130
PROMPT = hashlib.sha256(b"faithful+clarity rubric v2").hexdigest()


def _flip(rng: random.Random, label: str, accuracy: float, labels=("pass", "fail")) -> str:
    return label if rng.random() < accuracy else next(x for x in labels if x != label)


def _clarity(rng: random.Random, true: int, spread: float) -> str:
    return str(min(5, max(1, true + rng.choice([-1, 0, 0, 1]) if rng.random() < spread else true)))


def demo_records(seed: int = SEED) -> list[dict]:
    """Criteria, items, verdicts (gpt-4o x3 samples, claude x1) and two raters' labels."""
    rng = random.Random(seed)
    gpt = {"provider": "openai", "model": "gpt-4o", "temperature": 0.2, "prompt_sha256": PROMPT}
    claude = {
        "provider": "anthropic",
        "model": "claude-3-5-sonnet",
        "temperature": 0.0,
        "prompt_sha256": PROMPT,
    }
    records: list[dict] = [
        {
            "type": "criterion",
            "name": "faithful",
            "labels": ["pass", "fail"],
            "positive": "pass",
            "ordinal": False,
            "critical": True,
            "version": "2",
            "text": "Every claim in the description is supported by the product record.",
        },
        {
            "type": "criterion",
            "name": "clarity",
            "labels": ["1", "2", "3", "4", "5"],
            "ordinal": True,
            "critical": False,
            "version": "1",
            "text": "How easy the description is to read (1 = confusing, 5 = crystal clear).",
        },
        {
            "type": "criterion",
            "name": "preference",
            "labels": ["A", "B", "tie"],
            "ordinal": False,
            "critical": False,
            "version": "1",
            "pairwise": True,
            "text": "Which description would you rather publish?",
        },
    ]
    for n in range(ITEMS):
        safety = n % 4 == 0
        slices = (["safety-sensitive"] if safety else []) + (["long"] if n % 3 == 0 else [])
        item_id = f"desc-{n:03d}"
        records.append(
            {
                "type": "item",
                "item_id": item_id,
                "slices": slices,
                "input": f"Product record {item_id}: ceramic mug, 350 ml, dishwasher safe",
                "output": f"Generated description {n} of a 350 ml dishwasher-safe mug.",
            }
        )
        truth = "pass" if rng.random() < 0.7 else "fail"
        for rater in ("ana", "ben"):
            records.append(
                {
                    "type": "human_label",
                    "item_id": item_id,
                    "criterion": "faithful",
                    "rater": rater,
                    "label": _flip(rng, truth, 0.95),
                }
            )
        judge_accuracy = 0.62 if safety else 0.93
        for sample in range(3):
            records.append(
                {
                    "type": "verdict",
                    "item_id": item_id,
                    "criterion": "faithful",
                    "label": _flip(rng, truth, judge_accuracy),
                    "judge": gpt,
                    "sample": sample,
                    "confidence": round(rng.uniform(0.55, 0.99), 2),
                    "explanation": "Checked each claim against the record.",
                }
            )
        records.append(
            {
                "type": "verdict",
                "item_id": item_id,
                "criterion": "faithful",
                "label": _flip(rng, truth, 0.85),
                "judge": claude,
                "sample": 0,
                "confidence": round(rng.uniform(0.5, 0.95), 2),
            }
        )
        clear = rng.choice([2, 3, 4, 4, 5])
        records.append(
            {
                "type": "human_label",
                "item_id": item_id,
                "criterion": "clarity",
                "rater": "ana",
                "label": _clarity(rng, clear, 0.3),
            }
        )
        records.append(
            {
                "type": "verdict",
                "item_id": item_id,
                "criterion": "clarity",
                "label": _clarity(rng, clear, 0.2),
                "judge": gpt,
                "sample": 0,
            }
        )
    records += _pairwise_records(rng, gpt)
    # Criteria, then items, then labels and verdicts: the importer writes consecutive items in
    # one batch, while interleaved records made it flush one item at a time.
    first = {"criterion": 0, "item": 1}
    return sorted(records, key=lambda r: first.get(r["type"], 2))


def _pairwise_records(rng: random.Random, judge: dict) -> list[dict]:
    """Thirty pairs of descriptions judged in both display orders (position bias shows)."""
    records = []
    for n in range(30):
        item_id = f"pair-{n:03d}"
        records.append(
            {
                "type": "item",
                "item_id": item_id,
                "slices": ["pairwise"],
                "input": f"Which description of product {n} is better for the shop?",
            }
        )
        better = "A" if rng.random() < 0.6 else "B"
        for order in (["A", "B"], ["B", "A"]):
            first_shown = order[0]
            # The judge leans towards whatever it sees first, 20% of the time.
            winner = first_shown if rng.random() < 0.2 else better
            records.append(
                {
                    "type": "pairwise_verdict",
                    "item_id": item_id,
                    "criterion": "preference",
                    "answer_a": f"Description A of product {n}: short and factual.",
                    "answer_b": f"Description B of product {n}: longer, warmer, one unsupported claim.",
                    "display_order": order,
                    "winner": winner,
                    "judge": judge,
                }
            )
        records.append(
            {
                "type": "human_label",
                "item_id": item_id,
                "criterion": "preference",
                "rater": "ana",
                "label": better,
            }
        )
    return records


def demo_judging_load(project: Project, *, users: dict) -> Project:
    """Fill (or refresh) the judge-calibration demo project, made with its members by the
    caller (`reviews.demo.load.demo_project(users, slug=SLUG, name=NAME)`); idempotent."""
    with tempfile.TemporaryDirectory(prefix="evalsite-demo-") as folder:
        path = Path(folder) / "product-descriptions.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in demo_records()) + "\n")
        file_import(actor=users["alex"], project=project, path=path, format="jsonl")
    slices_critical_set(project=project, names=["safety-sensitive"])
    panel_configure(  # the same again changes nothing
        project=project,
        name="majority",
        rule="majority",
        members=["openai/gpt-4o", "anthropic/claude-3-5-sonnet"],
    )
    if current_draw(project) is None:
        split_draw(actor=users["alex"], project=project, seed=SEED, held_out_fraction=0.5)
        for name, n in (("faithful", 12), ("preference", 4)):  # calibration items for raters
            items_send_to_humans(
                actor=users["alex"],
                project=project,
                criterion=latest_criterion(project=project, name=name),
                selection="calibration_sample",
                n=n,
                seed=SEED,
            )
    return project
