"""Evidence rendering benchmark: ``.venv/bin/python -m bench.evidence``.

Demo statement, page 1, 150 dpi. Median wall time of
  * PyMuPDF's own render: open + get_pixmap(dpi=150) + tobytes("png")
  * our ``evidence.render_page``: sniff + open + render + encode (what a cache miss costs)
Both open the PDF from disk, so the comparison is like for like. (A cache hit is a database
lookup and a read from storage: ``reviews/services/files/renders.py``.)
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path


def _median_ms(fn, repeats: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), times


def _refusals(repeats: int) -> None:
    """Refusals come before the work: a 60 MB file by its size, a 20k x 20k PNG by its header.

    (Moved here from the unit tests, where wall-clock limits failed on a loaded machine.)
    """
    from reviews import evidence
    from tests import bad_evidence  # the broken files live with the tests

    big = b"%PDF-1.7\n" + bytes(60 * 2**20)
    bomb = bad_evidence.bomb_png(20000, 20000)

    def refuse(data: bytes, name: str, **limits) -> None:
        try:
            evidence.inspect_evidence(data, name=name, **limits)
        except evidence.EvidenceError:
            return
        raise AssertionError(f"{name} was not refused")

    made, _ = _median_ms(lambda: bad_evidence.bomb_png(20000, 20000), 5)
    too_large, _ = _median_ms(lambda: refuse(big, "huge.pdf", max_bytes=50 * 2**20), repeats)
    too_many, _ = _median_ms(lambda: refuse(bomb, "bomb.png"), repeats)
    print(f"{'refusal':<38} {'ms':>9}")
    print(f"{'60 MB PDF over a 50 MB limit':<38} {too_large:>9.3f}")
    print(f"{'20k x 20k PNG bomb (' + format(len(bomb), ',') + ' bytes)':<38} {too_many:>9.3f}")
    print(f"{'building that bomb':<38} {made:>9.3f}")
    print(f"RESULT evidence_refuse_too_large_ms={too_large:.3f}")
    print(f"RESULT evidence_refuse_bomb_ms={too_many:.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--dpi", type=int, default=150, help="one of the zoom levels")
    parser.add_argument("--page", type=int, default=1)
    args = parser.parse_args(argv)

    from reviews import evidence
    from reviews.demo import documents as demo_evidence
    from reviews.evidence import pdf

    work = Path(tempfile.mkdtemp(prefix="bench-evidence-"))
    try:
        data = demo_evidence.statement_pdf()
        source = work / "statement.pdf"
        source.write_bytes(data)

        def pymupdf_own() -> bytes:
            return pdf.mupdf_png(source, args.page, dpi=args.dpi)

        def first_render() -> bytes:
            return evidence.render_page(source, args.page, dpi=args.dpi)

        pymupdf_own(), first_render()  # warm-up: imports, font loading
        # Interleave rounds so that load from other processes hits both sides alike.
        own_times: list[float] = []
        first_times: list[float] = []
        for _ in range(args.repeats):
            own_times += _median_ms(pymupdf_own, 1)[1]
            first_times += _median_ms(first_render, 1)[1]
        own, first = statistics.median(own_times), statistics.median(first_times)
        rows = [
            ("PyMuPDF get_pixmap + tobytes('png')", own, len(pymupdf_own())),
            ("render_page (a cache miss)", first, len(first_render())),
        ]
        print(f"Demo statement page {args.page} at {args.dpi} dpi, median of {args.repeats} runs")
        print(f"{'path':<38} {'ms':>9} {'bytes':>9}")
        for label, ms, size in rows:
            print(f"{label:<38} {ms:>9.3f} {size:>9,}")
        ratio = first / own
        print(f"first render / PyMuPDF own render: {ratio:.2f} (target <= 1.20)")
        print(f"RESULT evidence_first_render_ratio={ratio:.3f}")
        _refusals(args.repeats)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
