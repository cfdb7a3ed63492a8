"""The Label Studio side of the load step (bench/_label_studio_load.py) counts what issue #33
asks for: answers, errors, lost and over-assigned. Against a stand-in for Label Studio's API
(httpx.MockTransport, no server): a second or so, with or without var/bench/label-studio."""

from __future__ import annotations

import itertools
import json
import threading

import httpx
import pytest

from bench import _label_studio_load, _side_by_side_load
from bench._load_report import parse


class FakeLabelStudio:
    """next hands out tasks 1, 2, 3...; the annotation of task 3 is confirmed but not kept
    (lost), task 5 gets two annotations (over-assigned), and the save of task 4 fails."""

    def __init__(self):
        self.tasks, self.ids = itertools.count(1), itertools.count(100)
        self.stored: dict[int, list[dict]] = {}
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        with self.lock:
            if path == "/api/projects/7/next":
                task = next(self.tasks)
                return httpx.Response(200, json={"id": task}) if task <= 6 else httpx.Response(404)
            task = int(path.split("/")[3])
            if request.method == "GET":
                return httpx.Response(200, json=self.stored.get(task, []))
            if task == 4:
                return httpx.Response(500)
            annotation = {"id": next(self.ids)}
            if task != 3:
                copies = 2 if task == 5 else 1
                self.stored[task] = [annotation, *[{"id": 0}] * (copies - 1)]
            return httpx.Response(201, json=annotation)


def test_a_label_studio_load_counts_lost_errors_and_over_assigned(capsys):
    transport = httpx.MockTransport(FakeLabelStudio())
    with httpx.Client(base_url="http://ls.test", transport=transport) as api:
        got = _label_studio_load.run(api, 7, ["t1", "t2"], 30, transport=transport)

    assert got["errors"] == 1 and got["lost"] == 1 and got["over_assigned"] == 1, got
    out = capsys.readouterr().out
    assert "2 raters, Label Studio" in out and ": 5 answers in " in out
    assert "error: task 4: save HTTP 500" in out
    assert parse(out, "label_studio_load") == pytest.approx(got, abs=0.1)  # as bench.load prints


def test_the_load_table_sets_evalsite_beside_label_studio():
    figures = {
        "Label Studio": {"answers_per_s": 3.2, "save_p95_ms": 2200.0, "errors": 5, "lost": 0,
                         "over_assigned": 0},
        "Evalsite SQLite": json.loads(
            '{"answers_per_s": 40.0, "save_p95_ms": 110.0, "errors": 0, "lost": 0,'
            ' "over_assigned": 0}'
        ),
        "Evalsite PostgreSQL": None,  # its run failed: nothing claimed
    }  # fmt: skip
    rows = _side_by_side_load.table(figures)
    assert "| answers/s | 3.2 | 40.0 | 12.5× | — | — |" in rows
    assert "| save p95, ms | 2200.0 | 110.0 | 20.0× | — | — |" in rows
    assert "| errors | 5 | 0 | — | — | — |" in rows
    verdicts = _side_by_side_load.verdicts(figures)
    assert "Evalsite SQLite, answers/s ≥ 10× Label Studio's: met" in verdicts
    assert "Evalsite PostgreSQL, save p95 ≤ 150 ms: NOT met" in verdicts
