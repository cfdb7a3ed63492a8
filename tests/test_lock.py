"""The lock files `make install` and `make install-dev` install from cover pyproject.toml: every
dependency pinned, with hashes, at a version its range allows, and the serving lock pinning the
same versions as the dev one. A dependency added without `make lock` fails here."""

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s\\]+)", re.M)


def _pins(name: str) -> dict[str, str]:
    text = (ROOT / name).read_text()
    pins = {canonicalize_name(package): version for package, version in PIN.findall(text)}
    # Each pin carries its hashes (pip then installs with --require-hashes).
    assert text.count("==") == len(pins) and text.count("--hash=sha256:") >= len(pins), name
    return pins


def _unlocked(requirements: list[str], pins: dict[str, str]) -> list[str]:
    wrong = []
    for line in requirements:
        requirement = Requirement(line)
        version = pins.get(canonicalize_name(requirement.name))
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            wrong.append(f"{line} (locked: {version})")
    return wrong


def test_the_serving_lock_pins_every_runtime_dependency_in_range():
    assert _unlocked(PROJECT["dependencies"], _pins("requirements.lock")) == []


def test_the_dev_lock_pins_every_dependency_and_dev_extra_in_range():
    pins = _pins("requirements-dev.lock")
    requirements = PROJECT["dependencies"] + PROJECT["optional-dependencies"]["dev"]
    assert _unlocked(requirements, pins) == []


def test_both_locks_pin_the_same_versions():
    serving, dev = _pins("requirements.lock"), _pins("requirements-dev.lock")
    assert {name: (version, dev.get(name)) for name, version in serving.items()
            if dev.get(name) != version} == {}  # fmt: skip


def test_zero_x_dependencies_have_an_upper_bound():
    requirements = PROJECT["dependencies"] + PROJECT["optional-dependencies"]["dev"]
    unbounded = []
    for line in requirements:
        requirement = Requirement(line)
        lowest = [s.version for s in requirement.specifier if s.operator in (">=", "==", "~=")]
        zero_x = any(version.startswith("0.") for version in lowest)
        if zero_x and not any(s.operator in ("<", "<=", "==", "~=") for s in requirement.specifier):
            unbounded.append(line)
    assert unbounded == []
