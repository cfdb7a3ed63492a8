"""Deterministic evidence files for the demo loader and the tests.

* :func:`statement_pdf` - a 3-page bank statement (PDF, drawn with the evidence package's PDF primitives)
* :func:`receipt_png` - a café receipt (PNG, drawn with Pillow's built-in font)
* :func:`statement_citations` / :func:`receipt_citations` / :func:`citations` - where the key
  strings are (page, quote, bbox) so demo review files can cite them. Boxes come from the
  layout itself (font metrics), not from searching the output, so tests comparing them with
  ``reviews.evidence.locate_quote`` check something real. Statement boxes are PDF points, receipt boxes
  are pixels; both have the origin at the top-left.
* bad inputs for tests live in ``tests/bad_evidence.py``.

Same code + same library versions => same bytes (no clocks, no randomness).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from decimal import Decimal
from io import BytesIO
from typing import Literal

from reviews.evidence import DrawBox, DrawLine, DrawText, build_pdf, text_bbox, text_width

BBox = tuple[float, float, float, float]

HOLDER = "Northwind Traders Ltd"
ACCOUNT = "NW-004512"
CURRENCY = "USD"
PERIOD = "01 Mar 2024 - 31 Mar 2024"
OPENING = Decimal("9312.40")
CLOSING = Decimal("12480.55")
TOTAL_DUE = Decimal("1200.00")
RECEIPT_TOTAL = Decimal("23.40")

PAGE_W, PAGE_H = 612.0, 792.0  # US Letter, points
LEFT, RIGHT = 54.0, 558.0


@dataclass(frozen=True, slots=True)
class Citation:
    field: str  # what the string is, e.g. "account_number"
    page: int  # 1-based
    quote: str  # the text as it reads on the page
    bbox: BBox  # [x0, y0, x1, y1], origin top-left
    unit: Literal["pt", "px"]  # PDF points (statement) or image pixels (receipt)
    page_size: tuple[float, float]  # page width/height in the same unit

    def as_dict(self) -> dict:
        return {
            "field": self.field,
            "page": self.page,
            "quote": self.quote,
            "bbox": [round(v, 2) for v in self.bbox],
            "unit": self.unit,
            "page_size": [round(v, 2) for v in self.page_size],
        }


def money(value: Decimal) -> str:
    return f"{value:,.2f}"


def _union(*boxes: BBox) -> BBox:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _right(x_right: float, y: float, text: str, size: float = 9.0, font: str = "helv") -> DrawText:
    """Text right-aligned at ``x_right`` (amount columns)."""
    w = text_width(text, size=size, font=font)
    return DrawText(x_right - w, y, text, size=size, font=font)


# --------------------------------------------------------------------------------------------
# Bank statement

# (day, description, reference, amount) - positive = credit, negative = debit. The last row
# is computed so that the statement closes at CLOSING.
_TRANSACTIONS: list[tuple[int, str, str, Decimal]] = [
    (1, "Card payment - Office Depot", "CP-77120", Decimal("-184.32")),
    (2, "Incoming transfer - Contoso Retail", "TR-50211", Decimal("2450.00")),
    (4, "Direct debit - City Water Utility", "DD-11873", Decimal("-96.18")),
    (5, "Card payment - Fabrikam Fuel", "CP-77164", Decimal("-72.50")),
    (7, "Incoming transfer - Adventure Works", "TR-50266", Decimal("1875.25")),
    (8, "Standing order - Rent, Unit 4B", "SO-00412", Decimal("-1650.00")),
    (11, "Card payment - Litware Software", "CP-77301", Decimal("-49.99")),
    (12, "Incoming transfer - Tailspin Toys", "TR-50340", Decimal("920.40")),
    (14, "Direct debit - Northwind Insurance", "DD-11902", Decimal("-310.00")),
    (15, "Loan repayment - Facility 2231", "LN-02231", Decimal("-600.00")),
    (18, "Card payment - Wide World Importers", "CP-77455", Decimal("-233.87")),
    (19, "Incoming transfer - Woodgrove Bank", "TR-50412", Decimal("1310.00")),
    (21, "Direct debit - Telecom Services", "DD-11950", Decimal("-88.40")),
    (22, "Cash deposit - Branch 014", "CD-00987", Decimal("500.00")),
    (25, "Card payment - Proseware Print", "CP-77532", Decimal("-127.64")),
    (26, "Payroll - March staff salaries", "PR-03024", Decimal("-4200.00")),
    (27, "Incoming transfer - Fourth Coffee", "TR-50498", Decimal("2764.80")),
    (28, "Bank charges - March", "BC-0324", Decimal("-25.00")),
]
_TRANSACTIONS.append(
    (
        29,
        "Incoming transfer - Margie's Travel",
        "TR-50533",
        CLOSING - OPENING - sum((t[3] for t in _TRANSACTIONS), Decimal(0)),
    )
)


def _header(page: int) -> list:
    return [
        DrawBox(LEFT, 36, RIGHT, 78, fill=(0.12, 0.23, 0.45), stroke=None),
        DrawText(LEFT + 12, 62, "Meridian Commercial Bank", size=16, font="hebo", color=(1, 1, 1)),
        DrawText(RIGHT - 150, 62, "Business account statement", size=9, color=(1, 1, 1)),
        DrawLine(LEFT, 760, RIGHT, 760, width=0.4, color=(0.6, 0.6, 0.6)),
        DrawText(
            LEFT,
            774,
            "Meridian Commercial Bank plc - 200 Harbour Road, Portland, OR 97201",
            size=7,
            color=(0.35, 0.35, 0.35),
        ),
        DrawText(RIGHT - 40, 774, f"Page {page} of 3", size=7, color=(0.35, 0.35, 0.35)),
    ]


@functools.cache
def _statement_layout() -> tuple[tuple[tuple, ...], tuple[Citation, ...]]:
    cites: list[Citation] = []
    size = (PAGE_W, PAGE_H)

    def cite(field: str, page: int, quote: str, *ops: DrawText) -> None:
        cites.append(Citation(field, page, quote, _union(*(text_bbox(o) for o in ops)), "pt", size))

    # Page 1: who, which account, which period.
    p1 = _header(1)
    p1 += [
        DrawText(LEFT, 118, HOLDER, size=11, font="hebo"),
        DrawText(LEFT, 132, "14 Quayside Lane", size=9),
        DrawText(LEFT, 144, "Portland, OR 97209", size=9),
        DrawText(LEFT, 156, "United States", size=9),
    ]
    cite("account_holder", 1, HOLDER, p1[-4])
    y = 200
    fields = [
        ("account_holder", "Account holder", HOLDER),
        ("account_number", "Account number", ACCOUNT),
        ("currency", "Currency", CURRENCY),
        ("statement_period", "Statement period", PERIOD),
        ("sort_code", "Sort code", "30-94-57"),
        ("statement_date", "Statement date", "02 Apr 2024"),
    ]
    p1.append(DrawText(LEFT, y - 22, "Account details", size=12, font="hebo"))
    for field, label, value in fields:
        lab = DrawText(LEFT, y, label, size=10, color=(0.3, 0.3, 0.3))
        val = DrawText(LEFT + 140, y, value, size=10, font="hebo")
        p1 += [lab, val, DrawLine(LEFT, y + 6, RIGHT, y + 6, width=0.3, color=(0.8, 0.8, 0.8))]
        if field != "account_holder":
            cite(field, 1, value, val)
        y += 22
    y += 20
    p1.append(DrawText(LEFT, y, "Balance overview", size=12, font="hebo"))
    y += 22
    credits = sum((t[3] for t in _TRANSACTIONS if t[3] > 0), Decimal(0))
    debits = -sum((t[3] for t in _TRANSACTIONS if t[3] < 0), Decimal(0))
    for label, value in (
        ("Opening balance on 01 Mar 2024", OPENING),
        ("Money in", credits),
        ("Money out", debits),
        ("Closing balance on 31 Mar 2024", CLOSING),
    ):
        p1 += [DrawText(LEFT, y, label, size=10), _right(RIGHT, y, money(value), size=10)]
        y += 18
    p1.append(
        DrawText(
            LEFT,
            y + 24,
            "All amounts are in US dollars (USD). Please check this statement "
            "and tell us about any entry you do not recognise.",
            size=8,
            color=(0.35, 0.35, 0.35),
        )
    )

    # Page 2: transactions table.
    p2 = _header(2)
    p2.append(DrawText(LEFT, 108, f"Transactions - account {ACCOUNT}", size=12, font="hebo"))
    cols = {"date": LEFT + 4, "desc": LEFT + 62, "ref": LEFT + 262}
    right_cols = {"out": 408.0, "in": 478.0, "bal": RIGHT - 4}
    y = 134.0
    p2.append(DrawBox(LEFT, y - 12, RIGHT, y + 5, fill=(0.9, 0.92, 0.96), stroke=None))
    for name, label in (("date", "Date"), ("desc", "Description"), ("ref", "Reference")):
        p2.append(DrawText(cols[name], y, label, size=9, font="hebo"))
    for name, label in (("out", "Paid out"), ("in", "Paid in"), ("bal", "Balance")):
        p2.append(_right(right_cols[name], y, label, size=9, font="hebo"))
    y += 20
    p2 += [
        DrawText(cols["desc"], y, "Opening balance", size=9),
        _right(right_cols["bal"], y, money(OPENING), size=9),
    ]
    balance = OPENING
    for day, desc, ref, amount in _TRANSACTIONS:
        y += 20
        balance += amount
        p2 += [
            DrawLine(LEFT, y - 13, RIGHT, y - 13, width=0.3, color=(0.85, 0.85, 0.85)),
            DrawText(cols["date"], y, f"{day:02d} Mar", size=9),
            DrawText(cols["desc"], y, desc, size=9),
            DrawText(cols["ref"], y, ref, size=9, font="cour"),
            _right(right_cols["out" if amount < 0 else "in"], y, money(abs(amount)), size=9),
            _right(right_cols["bal"], y, money(balance), size=9),
        ]
    assert balance == CLOSING
    y += 20
    p2 += [
        DrawLine(LEFT, y - 13, RIGHT, y - 13, width=0.8),
        DrawText(cols["desc"], y, "Closing balance", size=9, font="hebo"),
        _right(right_cols["bal"], y, money(CLOSING), size=9, font="hebo"),
    ]

    # Page 3: summary and amount due.
    p3 = _header(3)
    p3.append(DrawText(LEFT, 112, "Summary", size=14, font="hebo"))
    y = 146.0
    rows = [
        ("opening_balance", "Opening balance", OPENING, "helv"),
        ("money_in", "Total paid in", credits, "helv"),
        ("money_out", "Total paid out", debits, "helv"),
        ("closing_balance", "Closing balance", CLOSING, "hebo"),
    ]
    for field, label, value, font in rows:
        lab = DrawText(LEFT, y, label, size=11, font=font)
        val = DrawText(LEFT + 130, y, money(value), size=11, font=font)
        p3 += [lab, val]
        if field == "closing_balance":
            cite(field, 3, f"{label} {money(value)}", lab, val)
        y += 20
    y += 24
    p3 += [
        DrawText(LEFT, y, "Business loan facility 2231", size=12, font="hebo"),
        DrawBox(LEFT, y + 10, RIGHT, y + 96, fill=(0.97, 0.97, 0.97), stroke=(0.7, 0.7, 0.7)),
    ]
    y += 32
    for label, value in (("Instalment", "600.00"), ("Arrears", "600.00")):
        p3 += [DrawText(LEFT + 12, y, label, size=10), DrawText(LEFT + 130, y, value, size=10)]
        y += 18
    lab = DrawText(LEFT + 12, y, "Total due", size=11, font="hebo")
    val = DrawText(LEFT + 130, y, money(TOTAL_DUE), size=11, font="hebo")
    p3 += [lab, val, DrawText(LEFT + 260, y, "by 15 Apr 2024", size=10)]
    cite("total_due", 3, f"Total due {money(TOTAL_DUE)}", lab, val)
    p3.append(
        DrawText(
            LEFT,
            y + 60,
            "Questions? Call 1-800-555-0142 or visit any branch.",
            size=9,
            color=(0.35, 0.35, 0.35),
        )
    )
    return (tuple(p1), tuple(p2), tuple(p3)), tuple(cites)


@functools.cache
def statement_pdf() -> bytes:
    """A 3-page business bank statement for Northwind Traders Ltd, account NW-004512."""
    pages, _ = _statement_layout()
    return build_pdf(
        pages,
        page_size=(PAGE_W, PAGE_H),
        title="Statement NW-004512 March 2024",
        author="Meridian Commercial Bank",
    )


def statement_citations() -> list[Citation]:
    """Key strings of :func:`statement_pdf`; boxes in PDF points."""
    return list(_statement_layout()[1])


# --------------------------------------------------------------------------------------------
# Receipt

RECEIPT_SIZE = (480, 760)  # pixels


@functools.cache
def _receipt() -> tuple[bytes, tuple[Citation, ...]]:
    from PIL import Image, ImageDraw, ImageFont

    width, height = RECEIPT_SIZE
    image = Image.new("RGB", (width, height), (252, 251, 247))
    draw = ImageDraw.Draw(image)
    big = ImageFont.load_default(size=30)
    mid = ImageFont.load_default(size=20)
    small = ImageFont.load_default(size=16)
    cites: list[Citation] = []
    margin = 36

    def text(x: float, y: float, s: str, font, *, anchor: str = "la") -> BBox:
        draw.text((x, y), s, font=font, fill=(20, 20, 20), anchor=anchor)
        return tuple(float(v) for v in draw.textbbox((x, y), s, font=font, anchor=anchor))

    def cite(field: str, quote: str, *boxes: BBox) -> None:
        cites.append(Citation(field, 1, quote, _union(*boxes), "px", (width, height)))

    y = 40
    b = text(width / 2, y, "BLUE HERON CAFE", big, anchor="ma")
    cite("store_name", "BLUE HERON CAFE", b)
    y += 46
    text(width / 2, y, "12 Harbour Street, Portland", small, anchor="ma")
    y += 24
    text(width / 2, y, "VAT no. GB 284 1173 06", small, anchor="ma")
    y += 44
    label = text(margin, y, "Date:", mid)
    b = text(label[2] + 10, y, "2024-03-14", mid)
    text(b[2] + 16, y, "12:41", mid)
    cite("date", "2024-03-14", b)
    y += 30
    text(margin, y, "Table 7    Server: Dana", mid)
    y += 40
    draw.line((margin, y, width - margin, y), fill=(60, 60, 60), width=2)
    y += 20
    items = [("Flat white x2", "8.40"), ("Avocado toast", "11.50"), ("Sparkling water", "3.50")]
    assert sum(Decimal(p) for _, p in items) == RECEIPT_TOTAL
    for name, price in items:
        text(margin, y, name, mid)
        text(width - margin, y, price, mid, anchor="ra")
        y += 34
    y += 6
    draw.line((margin, y, width - margin, y), fill=(60, 60, 60), width=2)
    y += 20
    text(margin, y, "Subtotal", mid)
    text(width - margin, y, money(RECEIPT_TOTAL), mid, anchor="ra")
    y += 34
    text(margin, y, "VAT incl. (20%)", small)
    text(width - margin, y, "3.90", small, anchor="ra")
    y += 40
    label = text(margin, y, "TOTAL", big)
    amount = text(width - margin, y, money(RECEIPT_TOTAL), big, anchor="ra")
    cite("total", f"TOTAL {money(RECEIPT_TOTAL)}", label, amount)
    y += 60
    text(margin, y, "Card  **** 4417   CONTACTLESS", small)
    y += 26
    text(margin, y, "Auth code 093114", small)
    y += 60
    text(width / 2, y, "Thank you - see you soon!", mid, anchor="ma")

    out = BytesIO()
    image.save(out, "PNG", optimize=False, compress_level=6)
    return out.getvalue(), tuple(cites)


def receipt_png() -> bytes:
    """A café receipt, 480 x 760 px, with a "TOTAL 23.40" line."""
    return _receipt()[0]


def receipt_citations() -> list[Citation]:
    """Key strings of :func:`receipt_png`; boxes in pixels."""
    return list(_receipt()[1])


def citations(document: Literal["statement", "receipt"]) -> list[Citation]:
    """Where the key strings of a demo document are."""
    if document == "statement":
        return statement_citations()
    if document == "receipt":
        return receipt_citations()
    raise ValueError(f"unknown demo document {document!r}")


def citation(document: Literal["statement", "receipt"], field: str) -> Citation:
    for c in citations(document):
        if c.field == field:
            return c
    raise KeyError(field)
