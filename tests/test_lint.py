"""`make lint` (README, "Tests and benchmarks") passes on the checkout, so a landed change that
leaves ruff or a migration behind fails the suite instead of the next reader's `make lint`."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_lint_passes():
    # `-o install-dev`: the virtualenv running this suite is the one to lint with, never reinstalled.
    result = subprocess.run(
        ["make", "-o", "install-dev", "lint"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
