"""Agreement benchmark: ``.venv/bin/python -m bench.agreement``.

100k correlated human/judge label pairs (3 string labels, seeded). Median wall time of
  * ours: confusion matrix from the label lists + Cohen's kappa + 2,000-resample bootstrap CI
    (percentile and BCa, both from the same multinomial resamples) -- target < 1 s
  * ours, point estimate only: confusion matrix + Cohen's kappa
  * scikit-learn ``cohen_kappa_score`` on the same lists (point estimate only)
Runs are interleaved so that load from other processes hits every path alike.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

LABELS = ["pass", "partial", "fail"]


def correlated_labels(n: int, seed: int, agree: float = 0.7) -> tuple[list[str], list[str]]:
    """Human labels with prevalence 50/30/20 %; the judge copies them with probability ``agree``."""
    rng = np.random.default_rng(seed)
    human = rng.choice(len(LABELS), size=n, p=[0.5, 0.3, 0.2])
    judge = np.where(rng.random(n) < agree, human, rng.choice(len(LABELS), size=n))
    return [LABELS[i] for i in human], [LABELS[i] for i in judge]


def _time_ms(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args(argv or [])

    from sklearn.metrics import cohen_kappa_score  # dev dependency: only here

    from judging.metrics import cohen_kappa, cohen_kappa_ci, confusion_matrix

    human, judge = correlated_labels(args.pairs, args.seed)

    def ours_ci():
        table = confusion_matrix(human, judge, LABELS)
        return cohen_kappa_ci(table, n_resamples=args.resamples, rng=args.seed)

    def ours_point():
        return cohen_kappa(confusion_matrix(human, judge, LABELS))

    def sklearn_point():
        return cohen_kappa_score(human, judge, labels=LABELS)

    result, point, reference = ours_ci(), ours_point(), sklearn_point()  # warm-up
    if abs(point.value - reference) > 1e-12:
        raise SystemExit(f"kappa mismatch: ours {point.value!r} vs sklearn {reference!r}")
    times: dict[str, list[float]] = {"ci": [], "point": [], "sklearn": []}
    for _ in range(args.repeats):
        times["ci"].append(_time_ms(ours_ci))
        times["point"].append(_time_ms(ours_point))
        times["sklearn"].append(_time_ms(sklearn_point))
    ci, own, sk = (statistics.median(times[key]) for key in ("ci", "point", "sklearn"))

    print(
        f"{args.pairs:,} label pairs, {len(LABELS)} labels, {args.resamples:,} resamples, "
        f"median of {args.repeats} runs"
    )
    print(
        f"kappa {point.value:.4f}  percentile CI [{result.percentile[0]:.4f}, "
        f"{result.percentile[1]:.4f}]  BCa CI [{result.bca[0]:.4f}, {result.bca[1]:.4f}]  "
        f"undefined resamples {result.resamples_undefined}"
    )
    print(f"{'path':<52} {'median ms':>10}")
    rows = [
        ("ours: kappa + bootstrap CI (percentile + BCa)", ci),
        ("ours: kappa point estimate", own),
        ("scikit-learn cohen_kappa_score (point only)", sk),
    ]
    for label, ms in rows:
        print(f"{label:<52} {ms:>10.2f}")
    print(
        f"ours CI / sklearn point: {ci / sk:.2f}   ours point / sklearn point: {own / sk:.2f}   "
        f"(target: CI < 1000 ms)"
    )
    print(f"RESULT agreement_100k_ci_ms={ci:.2f}")
    print(f"RESULT agreement_100k_point_ms={own:.2f}")
    print(f"RESULT sklearn_kappa_100k_ms={sk:.2f}")
    print(f"RESULT agreement_ci_vs_sklearn_point_ratio={ci / sk:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
