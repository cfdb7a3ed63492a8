import copy
import itertools
import os
import shutil
from pathlib import Path

import pytest
from django.db import transaction
from django.test import override_settings
from hypothesis import settings as hypothesis_settings

from tests import builders
from tests.factories import ProjectFactory, member

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture
def project(db):
    return ProjectFactory()


@pytest.fixture
def rater(project):
    return member(project, "rater")


@pytest.fixture
def outsider(db):
    return member(ProjectFactory())


# Hypothesis: `ci` (chosen when CI=true) draws the same examples on every run, so a red CI run
# is reproducible and a green one is not luck; `dev` keeps exploring new examples locally.
hypothesis_settings.register_profile(
    "ci", derandomize=True, database=None, deadline=None, print_blob=True
)
hypothesis_settings.register_profile("dev", deadline=None)
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") == "true" else "dev")
)


@pytest.fixture(autouse=True, scope="session")
def _fast_passwords():
    """MD5 password hashing for the whole suite: PBKDF2's 1M iterations cost ~0.5 s per user."""
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


_TEST_FOLDERS = itertools.count(1)


def _settings_for(folder: Path) -> dict:
    """What every test (and every module's shared data, see `module_db`) runs with."""
    from django.conf import settings

    return {
        "MEDIA_ROOT": folder / "media",
        "SIGNING_KEY_PATH": folder / "signing-key.pem",
        # Tests do not run collectstatic, so no hashed manifest.
        "STORAGES": {
            **settings.STORAGES,
            "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
        },
        # Judges in tests talk to stub servers on loopback ports (each `WireServer` allows its
        # own port while it runs), with the STUB_KEY variable; port 9 (discard) answers nothing.
        "JUDGE_ALLOWED_HOSTS": ["127.0.0.1:9"],
        "JUDGE_API_KEY_ENVS": [*settings.JUDGE_API_KEY_ENVS, "STUB_KEY"],
    }


@pytest.fixture(autouse=True)
def _per_test_settings(settings, tmp_path_factory):
    """Every test writes evidence, renders and keys into its own folder. The folder is only
    named here, not made (storage and key writers make it), which spares each test the cost of
    pytest's `tmp_path` (a directory and a symlink); tests that want `tmp_path` still ask."""
    folder = tmp_path_factory.getbasetemp() / "media-of-tests" / f"test-{next(_TEST_FOLDERS)}"
    for name, value in _settings_for(folder).items():
        setattr(settings, name, value)


class ModuleData:
    """Rows built once for a test module, in a transaction open until `close`: see `module_db`."""

    open: list["ModuleData"] = []

    def __init__(self, folder: Path, blocker):
        self.folder, self._blocker = folder, blocker
        with blocker.unblock():
            self._atomic = transaction.atomic()
            self._atomic.__enter__()
        ModuleData.open.append(self)

    def build(self, build, *args, **kwargs):
        """`build(*args, **kwargs)`, its files under the module's own folder."""
        with self._blocker.unblock(), override_settings(**_settings_for(self.folder)):
            return build(*args, **kwargs)

    def fresh(self, built, settings):
        """A deep copy of `built` for one test, and the module's files in the test's folders:
        what a test changes in memory or on disk stays with it (its rows roll back anyway)."""
        assert self in ModuleData.open, "module_db rows are gone (a transactional test?)"
        if (self.folder / "media").is_dir():
            shutil.copytree(self.folder / "media", settings.MEDIA_ROOT, dirs_exist_ok=True)
        if (self.folder / "signing-key.pem").is_file():
            Path(settings.SIGNING_KEY_PATH).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.folder / "signing-key.pem", settings.SIGNING_KEY_PATH)
        return copy.deepcopy(built)

    def close(self):
        """Roll the module's rows back (once)."""
        if self in ModuleData.open:
            ModuleData.open.remove(self)
            with self._blocker.unblock():
                transaction.set_rollback(True)
                self._atomic.__exit__(None, None, None)


@pytest.fixture(scope="module")
def module_db(django_db_setup, django_db_blocker, tmp_path_factory):
    """setUpTestData for a test module: rows built with `module_db.build(fn)` are made once, in
    a transaction left open until the module's last test and then rolled back. Each test still
    runs in its own savepoint inside it (pytest-django), so what one test writes is gone before
    the next. pytest-django runs transactional tests after all others; before the first one,
    `pytest_runtest_setup` rolls back any module's rows still open, so its flush is real."""
    data = ModuleData(tmp_path_factory.mktemp("module-data"), django_db_blocker)
    yield data
    data.close()


# Fixtures through which a test reaches the database (pytest-django's, and module_db).
_DATABASE_FIXTURES = frozenset(
    {"db", "transactional_db", "live_server", "module_db", "django_db_reset_sequences",
     "django_db_serialized_rollback", "admin_user", "admin_client"}
)  # fmt: skip


def pytest_addoption(parser):
    parser.addoption(
        "--database-tests-only",
        action="store_true",
        help="run only tests that use the database (make test-postgres: a test that touches "
        "none, such as the formats, metrics and providers, gives the same result on any)",
    )


# The files that take longest (seconds of one worker on the 2-core machine, measured with
# `--durations`), run first: `make test` spreads whole files over two workers per database
# (pytest-xdist, --dist loadfile) in collection order, and a long file taken last would leave
# one worker running it alone at the end.
LONG_FILES = (
    "tests/test_readme.py",  # 110 s: every README command on a fresh copy
    "tests/browser/test_every_page.py",  # 92 s: every page as every demo role
    "tests/reviews/test_row_exports.py",  # 80 s: 100k rows in constant memory
    "tests/test_query_counts.py",  # 60 s: every URL at two site sizes
    "tests/judging/test_run_worker_kill.py",  # 46 s
    "tests/test_bench_harness.py",  # 42 s
    "tests/reviews/test_hostile_inputs.py",  # 40 s
    "tests/test_long_import_sqlite.py",  # 29 s
    "tests/reviews/test_import_worker_resume.py",  # 21 s
    "tests/reviews/test_import_staging.py",  # 21 s
)
_ROOT = Path(__file__).resolve().parent.parent


def pytest_collection_modifyitems(config, items):
    missing = [name for name in LONG_FILES if not (_ROOT / name).exists()]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py LONG_FILES names no file: {missing}")
    rank = {name: n for n, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
    if not config.getoption("database_tests_only"):
        return
    kept, dropped = [], []
    for item in items:
        uses_database = item.get_closest_marker("django_db") or (
            _DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))
        )
        (kept if uses_database else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before a transactional test, roll back module_db rows still open (see module_db)."""
    marker = item.get_closest_marker("django_db")
    asked = marker and (
        marker.args[:1] == (True,)
        or any(marker.kwargs.get(name) for name in ("transaction", "reset_sequences"))
    )
    transactional = asked or bool({"transactional_db", "live_server"} & set(item.fixturenames))
    if transactional:
        for data in list(ModuleData.open):
            data.close()


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Debian's Chromium, never a downloaded browser."""
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(
                "CI needs /usr/bin/chromium for the browser tests (apt-get install chromium)"
            )
        pytest.skip("/usr/bin/chromium is not installed")
    return {
        **browser_type_launch_args,
        "executable_path": str(CHROMIUM),
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    }


# --- Review workflow builders (tests/builders.py; test_workflow_*, test_views_*, test_queries_*) ---


@pytest.fixture
def review_item(db):
    """review_item(project, {"$.total": [...]}, …): see tests/builders.py."""
    return builders.review_item_builder()


@pytest.fixture
def rate(db):
    """rate(rater, item, {"$.total": "1200"}) → the rater's Assignment: see tests/builders.py."""
    return builders.rate


@pytest.fixture
def attach_evidence(db):
    """attach_evidence(item) → a one-page PDF Document cited by the item and all its claims."""
    return builders.attach_evidence


@pytest.fixture
def database_tasks(settings):
    """Tasks queued as rows, as on a real site, and a worker to run them."""
    from django_tasks_db.management.commands.db_worker import Worker
    from django_tasks_db.models import DBTaskResult

    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

    worker = Worker(queue_names=["*"], interval=0, batch=True, backend_name="default",
                    startup_delay=False, max_tasks=None, worker_id="test", excluded_queue_names=[])  # fmt: skip

    def work():  # the worker's loop but its transaction handling, which would end the test's
        while task := DBTaskResult.objects.ready().first():
            task.claim(worker.worker_id)
            worker.run_task(task)

    return work
