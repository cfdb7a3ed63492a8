"""The Stat result type and the package's purity (no Django import, no NaN results)."""

import ast
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import judging.metrics as metrics
from judging.metrics import Stat

PACKAGE = Path(metrics.__file__).parent
ROOT = PACKAGE.parent.parent


def test_as_dict_shape_is_exact_and_json_serialisable():
    assert Stat(0.5, (0.25, 0.75)).as_dict() == {
        "value": 0.5,
        "ci": [0.25, 0.75],
        "undefined_reason": None,
    }
    undefined = Stat.undefined("no items")
    assert undefined.as_dict() == {"value": None, "ci": None, "undefined_reason": "no items"}
    json.dumps(undefined.as_dict())
    assert type(Stat(1).value) is float


def test_invariants():
    assert Stat(0.1).is_defined and not Stat.undefined("why").is_defined
    for bad in (
        lambda: Stat(None),
        lambda: Stat.undefined(""),
        lambda: Stat(math.nan),
        lambda: Stat(math.inf),
        lambda: Stat(0.5, undefined_reason="both"),
        lambda: Stat(0.5, (0.7, 0.2)),
        lambda: Stat(0.5, (0.1, math.nan)),
        lambda: Stat(None, (0.1, 0.2), "why"),
    ):
        with pytest.raises(ValueError):
            bad()
    assert Stat(0.5).with_ci((0.4, 0.6)).ci == (0.4, 0.6)


def test_no_django_import_in_the_package_source():
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            assert not any(n == "django" or n.startswith("django.") for n in names), path


def test_importing_the_package_does_not_import_django():
    code = (
        "import sys, judging.metrics; "
        "sys.exit(any(m == 'django' or m.startswith('django.') for m in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False).returncode == 0


def test_every_public_function_documents_itself():
    for name in metrics.__all__:
        obj = getattr(metrics, name)
        if callable(obj):
            assert obj.__doc__ and obj.__doc__.strip(), name
