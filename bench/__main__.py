"""Run every benchmark: `python -m bench` (or `make bench`); one module per measurement.

Each module has a `main()` that prints a small table and `RESULT name=value` lines.
Select some with `python -m bench agreement evidence`.
"""

import importlib
import pkgutil
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    available = sorted(
        m.name
        for m in pkgutil.iter_modules([str(Path(__file__).parent)])
        if not m.name.startswith("_")
    )
    chosen = argv or available
    unknown = set(chosen) - set(available)
    if unknown:
        sys.exit(
            f"unknown benchmark(s): {', '.join(sorted(unknown))}; have: {', '.join(available)}"
        )
    for name in chosen:
        print(f"\n== bench.{name}")
        sys.argv = [f"bench.{name}"]  # each benchmark parses its own (default) options
        importlib.import_module(f"bench.{name}").main()


if __name__ == "__main__":
    main(sys.argv[1:])
