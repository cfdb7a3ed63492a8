"""The side-by-side benchmark harness still runs: `make bench` at a tiny size against Evalsite
only (SQLite, gunicorn on loopback; Label Studio and the load run left out), so it cannot rot
between the runs that bench/README.md records. A few seconds: one migrate, one gunicorn."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench import side_by_side

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    not (ROOT / ".venv/bin/gunicorn").exists() or shutil.which("nproc") is None,
    reason="needs the project's gunicorn",
)


def test_every_figure_is_measured_on_evalsite(capsys):
    argv = ["--sizes", "12", "--repeats", "3", "--databases", "sqlite"]
    results = side_by_side.main([*argv, "--no-label-studio", "--no-load"])

    got = results["Evalsite SQLite"][12]
    assert got["import"] > 0, got  # one API request took all 12 items
    for key in ("next", "list", "save", "submit"):
        assert got[key] > 0, (key, got)
    out = capsys.readouterr().out
    assert "| 12 | submit & next, ms |" in out
    assert "Evalsite SQLite import 3 of 12:" in out  # the median of three, a fresh file each
    assert "Label Studio was unavailable (not asked for): no ratios claimed." in out


def test_ratios_read_as_times_label_studio():
    results = {
        "Label Studio": {100: {"import": 5_000, "next": 100.0, "list": 80.0, "save": 60.0}},
        "Evalsite SQLite": {100: {"import": 16_000, "next": 10.0, "list": 16.0, "save": None}},
    }
    rows = side_by_side.table(results, [100], list(results))
    assert "| 100 | import items/s (API, one request) | 5,000 | 16,000 | 3.2× |" in rows
    assert "| 100 | next item (claim), ms | 100.0 | 10.0 | 10.0× |" in rows
    assert "| 100 | save an answer, ms | 60.0 | — | — |" in rows
    verdicts = side_by_side.verdicts(results, 100, ["Evalsite SQLite"])
    assert "Evalsite SQLite, import at 100: 3.2× (target ≥ 3×): met" in verdicts
    assert "Evalsite SQLite, next at 100: 10.0× (target ≥ 15×): NOT met" in verdicts
    assert "Evalsite SQLite, list at 100: 5.0× (target ≥ 15×): NOT met" in verdicts
    assert "Evalsite SQLite, save at 100: not measured (target ≥ 15×): NOT met" in verdicts
