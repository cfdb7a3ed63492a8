"""A varied calibration project for comparing dashboard payloads (issue #33: the recompute made
faster must give the same bytes). Seeded, built through the importer and `split_draw`: ties
among a judge's samples and among raters, missing verdicts and labels,
unparsed samples, stale verdicts and labels (items edited since), missing confidences, three criteria (two pass/fail, one critical; an ordinal one), two slices
(one critical), a panel, a held-out and a calibration split."""

from __future__ import annotations

import json
import random
from pathlib import Path

from django.db.models import F

from judging.models import Verdict
from judging.services.calibration.panels import panel_configure
from judging.services.calibration.splits import split_draw
from judging.services.dashboard import dashboard_compute
from reviews.models import Item, Slice
from reviews.services.imports.pipeline import file_import
from tests.judging.helpers import (
    criterion_record,
    human_record,
    item_record,
    verdict_record,
    write_jsonl,
)

ITEMS = 240
GPT = {"provider": "openai", "model": "gpt-4o", "temperature": 0.2}
CLAUDE = {"provider": "anthropic", "model": "claude", "temperature": 0.0}
CRITERIA = {"faithful": ["pass", "fail"], "concise": ["pass", "fail"], "tone": ["1", "2", "3"]}
GOLDEN = Path(__file__).resolve().parent.parent / "data" / "dashboard_varied_payload.json"


def _criteria() -> list[dict]:
    return [
        criterion_record(name="faithful", critical=True),
        criterion_record(name="concise", text="Says it once."),
        criterion_record(name="tone", labels=["1", "2", "3"], positive=None, ordinal=True),
    ]


def _labels(rng: random.Random, name: str, item_id: str, truth: int) -> list:
    labels = CRITERIA[name]
    pick = lambda right: labels[truth % len(labels)] if right else rng.choice(labels)  # noqa: E731
    out = []
    common = {"criterion": name}
    for rater in ("ana", "ben", "cid"):
        if rng.random() < 0.7:
            out.append(human_record(item_id, rater, pick(rng.random() < 0.8), **common))
    for judge, samples in ((GPT, 3), (CLAUDE, 2)):
        if rng.random() < 0.1:
            continue  # no verdict from this judge on this item
        for sample in range(samples):
            label = pick(rng.random() < 0.75)
            extra = {"confidence": round(rng.uniform(0.5, 1), 2)} if rng.random() < 0.8 else {}
            out.append(
                verdict_record(item_id, label, judge=judge, sample=sample, **common, **extra)
            )
    return out


def records(seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    items, labels = [], []
    for n in range(ITEMS):
        item_id = f"v{n:03d}"
        slices = [s for s, share in (("safety", 0.25), ("long", 0.4)) if rng.random() < share]
        output = "x" * rng.randint(1, 400) if n % 7 else {"answer": "é" * (n % 13), "n": n}
        items.append(item_record(item_id, slices=slices, output=output))
        for name in CRITERIA:
            labels += _labels(rng, name, item_id, rng.randint(0, 5))
    return _criteria() + items + labels


def build(project, folder: Path, actor=None) -> None:
    path = write_jsonl(folder / "varied.jsonl", records())
    file_import(actor=None, project=project, path=path, format="jsonl")
    Slice.objects.filter(project=project, name="safety").update(critical=True)
    panel_configure(
        project=project,
        name="majority",
        rule="majority",
        members=["openai/gpt-4o", "anthropic/claude"],
    )
    split_draw(actor=actor, project=project, seed=11, held_out_fraction=0.5)
    # What the importer refuses but a judge run can store (TextFlow's `unparsed`), and items
    # edited after their verdicts and labels: set by hand.
    verdicts = Verdict.objects.filter(item__project=project).order_by("pk")
    Verdict.objects.filter(pk__in=list(verdicts.values_list("pk", flat=True)[::37])).update(
        label="unparsed"
    )
    edited = Item.objects.filter(project=project, external_id__endswith="5")
    edited.update(revision=F("revision") + 1)


def payload_text(project) -> str:
    """The payload as canonical JSON text, without its time stamp."""
    payload = dashboard_compute(project)
    payload.pop("computed_at")
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, indent=0)
