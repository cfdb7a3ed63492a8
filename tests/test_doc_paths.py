"""The files README.md and docs/ cite exist, a cited `path.py: name` is defined there, and each
relative link reaches a file (and its `#anchor`, a heading there)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GENERATED = {"tests/browser/artifacts/"}
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Paths into the repository's own folders; `var/...` and the screenshots are made at run time.
CITED = re.compile(
    r"`((?:reviews|judging|evalsite|tests|docs|bench|templates|static)/[\w./-]+?)"
    r"(?::\s*(\w+))?`"
)
LINK = re.compile(r"\]\(([^)#:]+)(?:#([^)]+))?\)")


def _citations() -> list:
    return [
        pytest.param(*match.groups(), id=f"{doc.name}:{match.group(0)}")
        for doc in DOCS
        for match in CITED.finditer(doc.read_text())
        if match.group(1) not in GENERATED
    ]


@pytest.mark.parametrize(("path", "name"), _citations())
def test_a_cited_file_exists(path, name):
    target = ROOT / path.rstrip("/")
    assert target.exists(), f"{path} is cited but does not exist"
    if name:
        assert re.search(rf"^(?:def|class) {name}\b|^{name} = ", target.read_text(), re.M), (
            f"{path} does not define {name}"
        )


def _links() -> list:
    return [
        pytest.param(doc, *match.groups(), id=f"{doc.name}:{match.group(0)}")
        for doc in DOCS
        for match in LINK.finditer(doc.read_text())
    ]


def _anchor(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize(("doc", "target", "anchor"), _links())
def test_a_relative_link_reaches_its_file_and_heading(doc, target, anchor):
    path = doc.parent / target
    assert path.exists(), f"{doc.name} links to {target}, which does not exist"
    if anchor:
        headings = re.findall(r"^#+ (.+)$", path.read_text(), re.M)
        assert anchor in {_anchor(h) for h in headings}, f"{target} has no heading #{anchor}"
