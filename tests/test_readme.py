"""Every command the README prints works as printed on a fresh clone after `make run`.

The clone is a copy of the checkout's files (no `var/`, no `.env`) with `.venv` linked to the
running virtualenv; commands run with a bare environment (nothing exported: no DEBUG, no
SECRET_KEY, no DATABASE_URL), so the throw-away SQLite database lives in the clone's `var/`.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
MANAGE = ".venv/bin/python manage.py "
# The block this test does not run, and why: `make run` serves until stopped (its set-up steps
# run below instead) and `make test` runs this very suite.
MAKE_BLOCK = ["make run", "make test"]
# The production recipe: placeholders (`SECRET_KEY=...`) to fill in, and servers that never exit.
PRODUCTION_BLOCK_START = "export DEBUG=false SECRET_KEY=..."
# Blocks that need an approved item: the tour's rate and approve steps run first.
NEED_APPROVAL = ("export_ground_truth", "verify_approval")
APPROVE_SCRIPT = ROOT / "tests/data/scripts/approve_one_demo_item.py"
# Each block runs as one script, as a reader pastes it: stop at the first failing line (named by
# the trace), and stop any server the block started in the background.
PREAMBLE = "set -ex -o pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n"
BARE_ENV = {
    key: value
    for key, value in os.environ.items()
    if key in {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER"}
}

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, flags=re.S)


def _commands(block: str) -> list[str]:
    joined = re.sub(r"\\\n\s*", " ", block)  # shell line continuations
    return [re.sub(r"\s+#.*$", "", line).strip() for line in joined.splitlines() if line.strip()]


def _run(clone: Path, command: str, env_extra=None, script=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=clone,
        env={**BARE_ENV, **(env_extra or {})},
        capture_output=True,
        text=True,
        timeout=600,
        input=script,
    )


def _ok(result: subprocess.CompletedProcess, what: str) -> str:
    assert result.returncode == 0, (
        f"{what} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    )
    return result.stdout


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A fresh checkout: the repository's files as git sees them, nothing generated."""
    target = tmp_path_factory.mktemp("clone")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
    )
    if listed.returncode == 0:
        for name in filter(None, listed.stdout.decode().split("\0")):
            source = ROOT / name
            if source.is_file() and not source.is_symlink():
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / name)
    else:  # an exported tree, not a git checkout: everything but what git would ignore
        ignored = shutil.ignore_patterns(".venv", "var", ".env", "__pycache__", "artifacts")
        shutil.copytree(ROOT, target, ignore=ignored, dirs_exist_ok=True)
    (target / ".venv").symlink_to(Path(sys.prefix))
    return target


def test_every_readme_command_works_as_printed_after_make_run(clone):
    blocks = _blocks()
    assert _commands(blocks[0]) == MAKE_BLOCK
    production = [b for b in blocks if b.startswith(PRODUCTION_BLOCK_START)]
    assert len(production) == 1, "the README lost its production recipe"
    runnable = [b for b in blocks[1:] if b not in production]
    assert sum(line.startswith(MANAGE) for b in runnable for line in _commands(b)) >= 10

    # A fresh clone is production: no .env, no DEBUG, so no start without a SECRET_KEY.
    refused = _run(clone, MANAGE + "check")
    assert refused.returncode != 0 and "SECRET_KEY is not set" in refused.stderr

    # `make run`'s set-up: the real `.env` target, then migrate and the demo, nothing exported.
    _ok(_run(clone, "make .env"), "make .env")
    _ok(_run(clone, MANAGE + "migrate --noinput"), "migrate")
    _ok(_run(clone, MANAGE + "load_demo --if-empty"), "load_demo")

    approved = False
    for block in runnable:
        if not approved and any(name in block for name in NEED_APPROVAL):
            script = APPROVE_SCRIPT.read_text()
            _ok(_run(clone, MANAGE + "shell", script=script), "approving a demo item")
            approved = True
        _ok(_run(clone, PREAMBLE + block), block)

    # The environment still wins over `.env`: production refuses without a secret key.
    refused = _run(clone, MANAGE + "check", env_extra={"DEBUG": "false"})
    assert refused.returncode != 0 and "SECRET_KEY is not set" in refused.stderr


DEMO_FACTS = """
from judging.services.dashboard import dashboard_compute
from reviews.models import Project
for project in Project.objects.filter(slug__in=["demo", "judge-demo"]).order_by("slug"):
    print(project.slug, project.items.count())
for decision in dashboard_compute(Project.objects.get(slug="judge-demo"))["decisions"]:
    print(decision["judge"], decision["decision"], ",".join(decision["failing_criteria"]))
"""


def test_readme_describes_the_demo_the_site_shows(clone):
    """Item counts and each judge's release decision, as the README's demo paragraph says."""
    if not (clone / "var" / "evalsite.sqlite3").exists():
        _ok(_run(clone, "make .env && " + MANAGE + "migrate --noinput"), "migrate")
        _ok(_run(clone, MANAGE + "load_demo --if-empty"), "load_demo")
    facts = _ok(_run(clone, MANAGE + "shell", script=DEMO_FACTS), "demo facts").split("\n")
    counts = dict(line.split() for line in facts if line.startswith(("demo ", "judge-demo ")))
    assert counts["demo"] == "6" and "six items" in README
    assert f"{counts['judge-demo']} items" in README
    decisions = [
        line.split() for line in facts if line.startswith(("openai/", "anthropic/", "panel:"))
    ]
    assert decisions, facts
    for judge, decision, *failing in decisions:
        assert f"`{judge}`" in README or judge.startswith("panel:"), f"README omits {judge}"
        assert decision == "HOLD", f"README says every release holds; {judge} is {decision}"
        for criterion in failing[0].split(",") if failing else []:
            assert f"`{criterion}`" in README


# Each command the Commands table names: its parser's options, printed from one process.
COMMAND_HELP = """
import sys
from django.core.management import get_commands, load_command_class
for name in sys.stdin.read().split():
    if name not in get_commands():
        print(f"MISSING {name}")
        continue
    parser = load_command_class(get_commands()[name], name).create_parser("manage.py", name)
    print(f"COMMAND {name} " + " ".join(o for a in parser._actions for o in a.option_strings))
"""


def _table_commands() -> dict[str, set[str]]:
    """{command: the options its row prints} for each row of the README's Commands table."""
    section = README.split("| command | options |", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    names = [re.match(r"\| `([a-z_]+)", line).group(1) for line in rows]
    return {name: set(re.findall(r"--[a-z][-a-z0-9]*", row)) for name, row in zip(names, rows)}


def test_every_command_the_readme_names_exists_with_the_options_it_prints(clone):
    """Commands named outside the runnable blocks too: each Commands-table row and each inline
    `manage.py NAME` is a real command accepting every option the README prints for it, and each
    inline `make TARGET` is a Makefile target (servers and the suite itself are not run here)."""
    table = _table_commands()
    assert len(table) >= 20, table
    inline = set(re.findall(r"`manage\.py ([a-z_]+)", README)) - {"shell"}
    _ok(_run(clone, "make .env"), "make .env")
    script = COMMAND_HELP.replace("sys.stdin.read()", repr(" ".join(sorted({*table, *inline}))))
    printed = _ok(_run(clone, MANAGE + "shell", script=script), "command parsers").splitlines()
    assert not [line for line in printed if line.startswith("MISSING")], printed
    accepted = {
        words[1]: set(words[2:])
        for words in (line.split() for line in printed)
        if words and words[0] == "COMMAND"
    }
    missing = {name: opts - accepted[name] for name, opts in table.items() if opts - accepted[name]}
    assert missing == {}, "options the README prints that the command does not take"
    targets = set(re.findall(r"^([a-z][-a-z.]*):", (ROOT / "Makefile").read_text(), flags=re.M))
    named = set(re.findall(r"`(?:CI=true )?make ([a-z][-a-z]*)", README))
    assert named and named <= targets, named - targets
