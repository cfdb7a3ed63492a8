"""axe-core (Deque's accessibility rules engine, from the npm registry) for the browser tests:
fetched once with `npm pack` into a git-ignored folder, loaded into every page of a browser
context, and run with the WCAG 2.1 A and AA rules.

It is loaded as an init script (`context.add_init_script`), not `page.add_script_tag`: the
site's CSP forbids inline scripts, and a script tag's inline copy would be refused (and
counted as a CSP violation); init scripts are the browser's own, outside the page's CSP.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest

VERSION = "4.10.3"  # pinned: a new rule set is a deliberate upgrade, not a surprise in CI
FOLDER = Path(__file__).parent / ".axe"  # git-ignored
SCRIPT = FOLDER / f"axe-{VERSION}.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

# Every violation on the page: rule, impact and the first few elements it names.
RUN = """
async (tags) => {
  const result = await axe.run(document, {runOnly: {type: "tag", values: tags}});
  return result.violations.map((v) =>
    `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`);
}
"""


def axe_script() -> Path:
    """The path of axe.min.js, fetched from the npm registry the first time."""
    if SCRIPT.exists():
        return SCRIPT
    npm = shutil.which("npm")
    if npm is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs npm to fetch axe-core for the accessibility check")
        pytest.skip("npm is not installed: no axe-core for the accessibility check")
    FOLDER.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        subprocess.run(  # noqa: S603 (a fixed command: npm pack of a pinned package)
            [npm, "pack", f"axe-core@{VERSION}", "--pack-destination", work, "--silent"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        (tarball,) = Path(work).glob("axe-core-*.tgz")
        with tarfile.open(tarball) as archive:
            member = archive.extractfile("package/axe.min.js")
            assert member is not None, "axe-core's package has no axe.min.js"
            partial = SCRIPT.with_suffix(".part")
            partial.write_bytes(member.read())
            partial.replace(SCRIPT)  # whole or not at all, if two test runs fetch at once
    return SCRIPT


def axe_violations(page) -> list[str]:
    """The WCAG 2.1 A/AA violations on the page as it is now (axe loaded by `with_axe`)."""
    return page.evaluate(RUN, TAGS)


def with_axe(context) -> None:
    """Load axe-core into every page the context opens."""
    context.add_init_script(path=str(axe_script()))
