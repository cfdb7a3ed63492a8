from pathlib import Path

import pytest
from playwright.sync_api import expect

ARTIFACTS = Path(__file__).parent / "artifacts"

# `make test` runs the PostgreSQL pass beside this one, each holding a core: an expectation
# that a keystroke's request lands waits up to 20 s (Playwright's 5 s default missed once), and
# still fails fast when the page never gets there.
expect.set_options(timeout=20_000)


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture
def screenshot(page):
    """Save a full-page screenshot under tests/browser/artifacts/ (git-ignored)."""
    ARTIFACTS.mkdir(exist_ok=True)

    def take(name: str, *, full_page: bool = True):
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return take


@pytest.fixture
def login(page, live_server):
    def log_in(username: str, password: str):
        # Leave the page before first and clear the cookies after: a request of that page still
        # in flight could otherwise answer after the login page and set its own CSRF cookie, so
        # the login's POST would carry the other token (403, seen once under `make test`).
        page.goto("about:blank")
        page.context.clear_cookies()
        page.goto(f"{live_server.url}/accounts/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        # The login page is loaded already: wait for the page after it, or a goto right after
        # this could cancel the login's POST on a busy machine (signed out, a missing link).
        page.wait_for_url(lambda url: "/accounts/login/" not in url)

    return log_in


@pytest.fixture
def start_review(page, live_server):
    """Open My queue and press the project's Start (claiming the next item is a POST)."""

    def start(slug: str):
        page.goto(f"{live_server.url}/queue/")
        page.locator(f"tr[data-project='{slug}']").get_by_role("button").click()
        page.wait_for_load_state()

    return start
