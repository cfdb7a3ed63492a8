"""The dashboard's recompute gives the same bytes as before it was made faster (issue #33).

`tests/data/dashboard_varied_payload.json` is the payload `dashboard_compute` gave on the varied
project of `dashboard_varied.py` before the recompute's rewrite (`a49bd91`, the same on SQLite
and PostgreSQL); the rewrite must keep it, byte for byte, on both databases. A deliberate change
to the figures rewrites it with `payload_text` of a project `build` made (slug `varied`).
"""

from __future__ import annotations

import json

import pytest

from tests.factories import ProjectFactory
from tests.judging.dashboard_varied import GOLDEN, build, payload_text

pytestmark = pytest.mark.django_db


def test_the_payload_is_the_one_before_the_rewrite(tmp_path):
    project = ProjectFactory(slug="varied")
    build(project, tmp_path)
    text = payload_text(project)
    golden = GOLDEN.read_text(encoding="utf-8")
    if text != golden:  # the structural diff says where
        assert json.loads(text) == json.loads(golden)
    assert text == golden
