"""Drawing operations for building PDFs (demo documents and test files): plain data, no
PyMuPDF; :func:`reviews.evidence.pdf.build_pdf` draws them."""

from __future__ import annotations

from dataclasses import dataclass

FONTS = {"helv", "hebo", "heit", "cour", "cobo", "tiro", "tibo"}  # PDF base-14 fonts


@dataclass(frozen=True, slots=True)
class DrawText:
    """Text with its baseline starting at (x, y), points from the top-left."""

    x: float
    y: float
    text: str
    size: float = 10.0
    font: str = "helv"
    color: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class _Corners:
    """From (x0, y0) to (x1, y1), points from the top-left."""

    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True, slots=True)
class DrawLine(_Corners):
    width: float = 0.5
    color: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class DrawBox(_Corners):
    fill: tuple[float, float, float] | None = None
    stroke: tuple[float, float, float] | None = (0.0, 0.0, 0.0)
    width: float = 0.5


DrawOp = DrawText | DrawLine | DrawBox
