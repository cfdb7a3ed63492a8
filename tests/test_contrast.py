"""Text colours keep WCAG AA contrast (4.5:1) on the backgrounds they are drawn on: muted help
text (--ink-faint, 0.82rem) read at 3.5:1 on the page before, and the small bold badges below
4.5:1. The charts draw their labels in the stylesheet's muted ink."""

import re
from pathlib import Path

import pytest

from judging import charts

CSS = (Path(__file__).resolve().parent.parent / "static/css/evalsite.css").read_text()
ROOT = dict(re.findall(r"--([a-z-]+):\s*(#[0-9a-fA-F]{6})", CSS.split("}", 1)[0]))

# (text, background) pairs the stylesheet uses.
PAIRS = [
    (ink, background)
    for ink in ("ink", "ink-soft", "ink-faint", "accent", "ok", "warn", "bad")
    for background in ("surface", "bg")
] + [
    ("ink-faint", "accent-soft"),
    ("ok", "ok-soft"),
    ("warn", "warn-soft"),
    ("bad", "bad-soft"),
    ("accent", "accent-soft"),
    ("accent-ink", "accent"),
]


def _luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, other: str) -> float:
    light, dark = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize(("ink", "background"), PAIRS)
def test_text_colours_reach_aa_contrast(ink, background):
    assert contrast(ROOT[ink], ROOT[background]) >= 4.5, (ink, background)


def test_charts_use_the_stylesheets_muted_ink_and_warning():
    assert (ROOT["ink-faint"], ROOT["warn"]) == (charts.SOFT, charts.WARN)
    assert contrast(charts.SOFT, ROOT["surface"]) >= 4.5
