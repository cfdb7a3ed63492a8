"""Server-side charts as accessible SVG: no JavaScript, no CDN, printable, downloadable.

Every chart has a <title> and <desc> (screen readers read them; browsers show the title on
hover) and states its numbers as text, not only as ink. All text is escaped: criterion and
label names come from imported files.
"""

from __future__ import annotations

from html import escape

from django.utils.safestring import SafeString, mark_safe

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif"
INK, SOFT, LINE, ACCENT, WARN = "#1d2330", "#5f6a7d", "#dfe3ea", "#3b5bdb", "#a35400"
HEADING = 26  # the height a drawn heading adds


def trusted_svg(markup: str) -> SafeString:
    """Mark a chart from this module safe for templates: every text in it was escaped here."""
    return mark_safe(markup)  # noqa: S308 - built by this module, all text escaped


def _svg(width: float, height: float, title: str, desc: str, body: str, heading: str = "") -> str:
    """The chart; with `heading`, the title is also drawn above it (an exported PNG has no
    page around it to say what it shows)."""
    if heading:
        width = max(width, 7 * len(heading) + 16)  # about 7 px a character at 12 px
        body = _text(8, 16, heading, size=12, weight="600") + (
            f'<g transform="translate(0 {HEADING})">{body}</g>'
        )
        height += HEADING
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:g} {height:g}" '
        f'width="{width:g}" height="{height:g}" role="img" font-family="{FONT}">'
        f"<title>{escape(title)}</title><desc>{escape(desc)}</desc>{body}</svg>"
    )


def _text(x, y, text, *, size=11, anchor="start", fill=INK, weight="normal") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'fill="{fill}" font-weight="{weight}">{escape(str(text))}</text>'
    )


def interval_svg(
    value,
    ci,
    *,
    threshold=None,
    lo=-1.0,
    hi=1.0,
    width=320,
    height=52,
    title="Estimate with 95% CI",
    axis="κ",
) -> str:
    """A point with its CI as a bar on a [lo, hi] axis ticked at 0, 0.5 and 1 and labelled
    `axis`; the gate threshold dashed and labelled above the bar ("gate 0.60"). 320 px wide
    with 11 px text: readable at 1280x800 (170 px and 9 px were not)."""
    pad, mid, size = 12, 24, 11
    scale = (width - 2 * pad) / (hi - lo)

    def x(v):
        return pad + (min(max(v, lo), hi) - lo) * scale

    body = [
        f'<line x1="{pad}" y1="{mid}" x2="{width - pad}" y2="{mid}" stroke="{LINE}"/>',
        _text(1, height - 3, axis, size=size, fill=SOFT),
    ]
    for tick in (t for t in (0, 0.5, 1) if lo <= t <= hi):
        body.append(
            f'<line x1="{x(tick):.1f}" y1="{mid + 7}" x2="{x(tick):.1f}" y2="{mid + 12}" '
            f'stroke="{SOFT}"/>'
        )
        body.append(_text(x(tick), height - 3, f"{tick:g}", size=size, anchor="middle", fill=SOFT))
    if threshold is not None:
        gate = x(threshold)
        body.append(
            f'<line x1="{gate:.1f}" y1="13" x2="{gate:.1f}" y2="{mid + 10}" '
            f'stroke="{WARN}" stroke-dasharray="3 2"/>'
        )
        # The label stands left of the line when the line is near the right end.
        anchor = "end" if gate > width - 60 else "start"
        shift = -3 if anchor == "end" else 3
        body.append(
            _text(gate + shift, 10, f"gate {threshold:.2f}", size=size, anchor=anchor, fill=WARN)
        )
    if ci:
        body.append(
            f'<rect x="{x(ci[0]):.1f}" y="{mid - 5}" width="{max(1.5, x(ci[1]) - x(ci[0])):.1f}" '
            f'height="10" rx="3" fill="{ACCENT}" fill-opacity=".25" stroke="{ACCENT}"/>'
        )
    if value is not None:
        body.append(f'<circle cx="{x(value):.1f}" cy="{mid}" r="5" fill="{ACCENT}"/>')
    if value is None:
        desc = "undefined"
    elif ci:
        desc = f"{value:.3f}, 95% CI {ci[0]:.3f} to {ci[1]:.3f}"
    else:
        desc = f"{value:.3f}, no interval"
    if threshold is not None:
        desc += f"; gate threshold {threshold:.2f}"
    return _svg(width, height, title, desc, "".join(body))


def _shade(share: float) -> str:
    """White to the accent colour by share (0..1)."""
    r, g, b = 255 - share * (255 - 59), 255 - share * (255 - 91), 255 - share * (255 - 219)
    return f"rgb({r:.0f},{g:.0f},{b:.0f})"


def heatmap_svg(
    labels: list[str],
    counts: list[list[int]],
    *,
    title="Confusion matrix",
    row_axis="Human label",
    col_axis="Judge label",
    heading="",
) -> str:
    """Rows = human label, columns = judge label; each cell shows its count and row percentage."""
    k = len(labels)
    cell, left, top = 64, 110, 56
    width, height = left + k * cell + 12, top + k * cell + 16
    body = [
        _text(left + k * cell / 2, 16, col_axis, anchor="middle", weight="600"),
        f'<text transform="translate(14 {top + k * cell / 2}) rotate(-90)" font-size="11" '
        f'text-anchor="middle" fill="{INK}" font-weight="600">{escape(row_axis)}</text>',
    ]
    for j, label in enumerate(labels):
        body.append(_text(left + j * cell + cell / 2, top - 8, label, anchor="middle", fill=SOFT))
    parts = []
    for i, label in enumerate(labels):
        body.append(_text(left - 8, top + i * cell + cell / 2 + 4, label, anchor="end", fill=SOFT))
        total = sum(counts[i]) or 0
        for j in range(k):
            n = counts[i][j]
            body += _heatmap_cell(left + j * cell, top + i * cell, cell, n, total, diagonal=i == j)
            parts.append(f"human {label}, judge {labels[j]}: {n}")
    return _svg(width, height, title, "; ".join(parts), "".join(body), heading)


def _heatmap_cell(x, y, cell: int, n: int, total: int, *, diagonal: bool) -> list[str]:
    """One cell at (x, y): shaded by its share of the row, its count and that share on it."""
    share = n / total if total else 0.0
    colour = INK if share < 0.6 else "#ffffff"
    centre = x + cell / 2 - 1
    return [
        f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" rx="3" '
        f'fill="{_shade(share)}" stroke="{ACCENT if diagonal else LINE}"/>',
        _text(centre, y + cell / 2 - 2, n, size=14, anchor="middle", fill=colour, weight="600"),
        _text(
            centre,
            y + cell / 2 + 14,
            f"{share:.0%}" if total else "–",
            size=10,
            anchor="middle",
            fill=colour,
        ),
    ]


def reliability_svg(bins: list[dict], *, title="Reliability diagram", heading="") -> str:
    """Judge confidence (x) against observed accuracy (y) per bin; the diagonal is perfect."""
    size, left, bottom = 220, 48, 30
    width, height = left + size + 16, size + bottom + 16

    def px(v):
        return left + v * size

    def py(v):
        return 8 + (1 - v) * size

    body = [
        f'<rect x="{left}" y="8" width="{size}" height="{size}" fill="none" stroke="{LINE}"/>',
        f'<line x1="{px(0)}" y1="{py(0)}" x2="{px(1)}" y2="{py(1)}" stroke="{SOFT}" stroke-dasharray="4 3"/>',
        _text(left + size / 2, height - 4, "Judge confidence", anchor="middle", fill=SOFT),
        # The y label stands rotated beside the axis, clear of its tick labels.
        f'<text transform="translate(14 {py(0.5):.1f}) rotate(-90)" font-size="11" '
        f'text-anchor="middle" fill="{SOFT}">Observed accuracy</text>',
    ]
    parts = []
    for b in bins:
        if not b.get("count"):
            continue
        x0, x1 = px(b["low"]), px(b["high"])
        acc = b["accuracy"]
        body.append(
            f'<rect x="{x0 + 1:.1f}" y="{py(acc):.1f}" width="{max(1, x1 - x0 - 2):.1f}" '
            f'height="{py(0) - py(acc):.1f}" fill="{ACCENT}" fill-opacity=".6"/>'
        )
        parts.append(
            f"confidence {b['low']:.1f}-{b['high']:.1f}: accuracy {acc:.2f} (n={b['count']})"
        )
    for tick in (0, 0.5, 1):
        body.append(_text(px(tick), py(0) + 14, f"{tick:g}", size=10, anchor="middle", fill=SOFT))
        body.append(_text(left - 4, py(tick) + 4, f"{tick:g}", size=10, anchor="end", fill=SOFT))
    desc = "; ".join(parts) or "no confidences"
    return _svg(width, height, title, desc, "".join(body), heading)


def bars_svg(rows: list[tuple[str, int]], *, title="Counts") -> str:
    """Horizontal bars, one per (label, count)."""
    return value_bars_svg([(label, n, str(n)) for label, n in rows], title=title)


def value_bars_svg(rows: list[tuple[str, float, str]], *, title: str, left: int = 170) -> str:
    """Horizontal bars, one per (label, value, the value as printed beside its bar)."""
    bar, gap, span = 18, 6, 260
    height = max(1, len(rows)) * (bar + gap) + 8
    top = max((v for _, v, _ in rows), default=0) or 1
    body = []
    for i, (label, value, shown) in enumerate(rows):
        y = 4 + i * (bar + gap)
        body.append(_text(left - 8, y + 13, label, anchor="end"))
        body.append(
            f'<rect x="{left}" y="{y}" width="{span * value / top:.1f}" height="{bar}" rx="3" '
            f'fill="{ACCENT}" fill-opacity=".7"/>'
        )
        body.append(_text(left + span * value / top + 6, y + 13, shown, fill=SOFT))
    desc = "; ".join(f"{label}: {shown}" for label, _, shown in rows) or "no data"
    room = 6 + 7 * max((len(shown) for _, _, shown in rows), default=4)  # ~7 px a character
    return _svg(left + span + room, height, title, desc, "".join(body))


def diverging_bars_svg(rows: list[tuple[str, float, str]], *, title: str, left: int = 130) -> str:
    """Horizontal bars from a zero line on a fixed -1..1 axis, one per (label, value, the
    value as printed): negative to the left (soft), positive to the right (warning colour)."""
    bar, gap, half = 18, 6, 120
    zero = left + half
    height = max(1, len(rows)) * (bar + gap) + 8
    body = [f'<line x1="{zero}" y1="0" x2="{zero}" y2="{height}" stroke="{SOFT}"/>']
    for i, (label, value, shown) in enumerate(rows):
        y = 4 + i * (bar + gap)
        size = half * min(abs(value), 1.0)
        start = zero - size if value < 0 else zero
        colour = WARN if value > 0 else SOFT
        body.append(_text(left - 8, y + 13, label, anchor="end"))
        body.append(
            f'<rect x="{start:.1f}" y="{y}" width="{size:.1f}" height="{bar}" rx="2" '
            f'fill="{colour}" fill-opacity=".7"/>'
        )
        body.append(_text(zero + half + 8, y + 13, shown, fill=SOFT))
    desc = "; ".join(f"{label}: {shown}" for label, _, shown in rows) or "no data"
    room = 14 + 7 * max((len(shown) for _, _, shown in rows), default=4)  # ~7 px a character
    return _svg(zero + half + room, height, title, desc, "".join(body))
