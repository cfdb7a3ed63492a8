"""The dashboard's recompute gives the same payload as before it was made faster (issue #33).

`tests/data/dashboard_varied_payload.json` is the payload `dashboard_compute` gave on the varied
project of `dashboard_varied.py` before the recompute's rewrite (`a49bd91`, the same on SQLite
and PostgreSQL); the rewrite must keep it on both databases: every key, string, count and
null exactly, every float to 1e-9 of its value. Not byte for byte: numpy's matrix products and
`exp` take CPU-specific code paths (AVX-512 or not), so the length-bias fit's last digits
differ between machines with the same code (seen: 4.473778678115131 against ...513). A
deliberate change to the figures rewrites it with `payload_text` of a project `build` made
(slug `varied`).
"""

from __future__ import annotations

import json
import math

import pytest

from tests.factories import ProjectFactory
from tests.judging.dashboard_varied import GOLDEN, build, payload_text

pytestmark = pytest.mark.django_db


def differences(got, want, path: str = "$") -> list[str]:
    """Where `got` and `want` differ: types, keys, lengths and values exactly, floats to 1e-9."""
    if isinstance(got, float) and isinstance(want, float):
        return (
            []
            if math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)
            else [f"{path}: {got!r} != {want!r}"]
        )
    if type(got) is not type(want):
        return [f"{path}: {got!r} != {want!r}"]
    if isinstance(got, dict):
        if got.keys() != want.keys():
            return [f"{path}: keys {sorted(got)} != {sorted(want)}"]
        return [d for key in got for d in differences(got[key], want[key], f"{path}.{key}")]
    if isinstance(got, list):
        if len(got) != len(want):
            return [f"{path}: {len(got)} entries != {len(want)}"]
        return [
            d for i, pair in enumerate(zip(got, want)) for d in differences(*pair, f"{path}[{i}]")
        ]
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


def test_the_payload_is_the_one_before_the_rewrite(tmp_path):
    project = ProjectFactory(slug="varied")
    build(project, tmp_path)
    got = json.loads(payload_text(project))
    assert differences(got, json.loads(GOLDEN.read_text(encoding="utf-8"))) == []


def test_the_comparison_catches_a_changed_figure():
    want = {"rows": [{"kappa": 0.5, "n": 3, "reason": None}]}
    assert differences({"rows": [{"kappa": 0.5 + 1e-13, "n": 3, "reason": None}]}, want) == []
    assert differences({"rows": [{"kappa": 0.5001, "n": 3, "reason": None}]}, want)
    assert differences({"rows": [{"kappa": 0.5, "n": 4, "reason": None}]}, want)
    assert differences({"rows": [{"kappa": 0.5, "n": 3, "reason": "x"}]}, want)
    assert differences({"rows": [{"kappa": 0.5, "n": 3}]}, want)
    assert differences({"rows": []}, want)
