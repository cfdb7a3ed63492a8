"""A whole-site pass at 1280x800: every demo role visits every page (one live server, one
browser, one login per role), a full-page screenshot per page under tests/browser/artifacts/
(`site-ROLE-PAGE.png`), and on each page: no server error, no horizontal overflow, no console
error or CSP violation, no unlabelled form control, no stretched form button or card flush under a
table, no toast over a control (an item page is checked after an action that shows one), no
violation of axe-core's WCAG 2.1 A and AA rules (tests/browser/axe.py), and every primary button
reachable by scrolling and clicking."""

from __future__ import annotations

import json
import threading

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.test import override_settings
from django.urls import reverse

from judging.models import Run
from judging.services.judges.configs import JudgeSettings, judge_config_save
from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute
from judging.stub_model import make_server
from reviews.models import Item, Job, Project, Role
from reviews.services.projects.members import membership_add
from tests.browser.axe import axe_violations, with_axe
from tests.browser.conftest import ARTIFACTS
from tests.browser.page_checks import UNLABELLED
from tests.factories import ProjectFactory
from tests.judging.helpers import INVOICE_ROWS, invoice_predictions, referenced_item

pytestmark = pytest.mark.django_db(transaction=True)

ROLES = ("rita", "ada", "april", "alex")  # rater, adjudicator, approver, admin and staff
VIEWPORT = {"width": 1280, "height": 800}

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
});
"""

# The primary buttons that are not reachable: scrolled into view, the point at their centre
# must be the button itself (not clipped by a pane, not under a sticky bar, not off the page).
UNREACHABLE_BUTTONS = """
() => [...document.querySelectorAll("button.button-primary, a.button-primary, .actions button")]
  .filter((el) => el.offsetParent !== null)
  .filter((el) => {
    el.scrollIntoView({block: "center", inline: "nearest"});
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return !(hit && (hit === el || el.contains(hit)));
  })
  .map((el) => el.textContent.trim() || el.outerHTML.slice(0, 80))
"""

OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"

# A message (toast) never lies over a control: no visible button, link or form field outside the
# messages may intersect a message's box (those on the workspace pages once floated over the
# candidate links and reason boxes).
TOAST_OVER_CONTROLS = """
() => {
  // checkVisibility: a closed <details>' content (the user menu's links) has a box but is not shown.
  const shown = (el) => el.checkVisibility({visibilityProperty: true, opacityProperty: true});
  const toasts = [...document.querySelectorAll(".messages .message")].filter(shown);
  const controls = [...document.querySelectorAll("button, a[href], input:not([type=hidden]), textarea, select")]
    .filter((c) => shown(c) && !c.closest(".messages"));
  const overlaps = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const found = [];
  for (const toast of toasts) {
    const box = toast.getBoundingClientRect();
    for (const control of controls) {
      const r = control.getBoundingClientRect();
      if (r.width && r.height && overlaps(box, r)) {
        found.push(`toast "${toast.textContent.trim().slice(0, 40)}" covers ${control.outerHTML.slice(0, 60)}`);
      }
    }
  }
  return found;
}
"""

# Layout slips seen at 1280x800: a form's button stretched into a bar (a grid form's child), and
# a card or a row of buttons flush against the table above it.
LAYOUT_SLIPS = """
() => {
  const name = (el) => el.textContent.trim().slice(0, 40) || el.outerHTML.slice(0, 60);
  const shown = (el) => el.offsetParent !== null;
  const stretched = [...document.querySelectorAll("form.stacked > button, form.stacked > .button")]
    .filter((b) => shown(b) && !b.closest(".auth"))  // the login box's button is full width
    .filter((b) => b.offsetWidth > 0.8 * b.parentElement.clientWidth)
    .map((b) => `stretched button ${name(b)}`);
  const flush = [...document.querySelectorAll(".table-wrap + .card, .table-wrap + .actions")]
    .filter(shown)
    .filter((el) => el.getBoundingClientRect().top - el.previousElementSibling.getBoundingClientRect().bottom < 4)
    .map((el) => `flush under a table: ${name(el)}`);
  return [...stretched, ...flush];
}
"""


def _stub_run(project) -> Run:
    server = make_server()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    stub = f"127.0.0.1:{server.server_address[1]}"
    try:
        with override_settings(JUDGE_ALLOWED_HOSTS=[stub]):
            settings = JudgeSettings(
                provider="openai-compatible",
                model="stub",
                prompt="Is the description faithful? Answer with one of {{ labels }}.",
                criterion="faithful",
                base_url=f"http://{stub}/v1",
            )
            config = judge_config_save(
                project=project, name="faithful-stub", settings=settings
            ).config
            run = run_create(config=config, split="calibration", limit=6)
            run_execute(run)
            return run
    finally:
        server.shutdown()
        server.server_close()


def _exports(project, by) -> None:
    """The project page's Recent exports: a finished ground-truth .zip (its file stored) and a
    row export still running."""
    name = default_storage.save(f"exports/{project.pk}/browser.zip", ContentFile(b"PK"))
    for kind, status, data in [
        ("ground_truth_export", Job.Status.SUCCEEDED, {"format": ["review"]}),
        ("rows_export", Job.Status.RUNNING, {"kind": ["answers"], "format": ["parquet"]}),
    ]:
        params = {"data": data, "extra": {"file": name}}
        Job.objects.create(project=project, created_by=by, kind=kind, status=status, params=params)


def _site(tmp_path) -> dict[str, str]:
    """The demo, a judge run, an import and a score run; every page's path by name."""
    call_command("load_demo")
    demo = Project.objects.get(slug="demo")
    judged = Project.objects.get(slug="judge-demo")
    run = _stub_run(judged)
    scored = ProjectFactory(slug="invoices", name="Invoices")
    referenced_item(scored, "inv-1", INVOICE_ROWS)
    alex = get_user_model().objects.get(username="alex")
    membership_add(actor=None, project=scored, user=alex, role=Role.ADMIN)
    _exports(demo, alex)
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in invoice_predictions("inv-1")))
    items = tmp_path / "more.csv"
    items.write_text("item_id,input\nextra-1,An extra item\n")
    call_command("import_items", str(items), "--project", "demo", "--kind", "item")
    item = Item.objects.filter(project=demo, questions__isnull=False).order_by("pk").first()
    judged_item = Item.objects.filter(project=judged).order_by("pk").first()
    d, j = {"slug": "demo"}, {"slug": "judge-demo"}
    return {
        "home": reverse("home"),
        "projects": reverse("project_list"),
        "project-new": reverse("project_new"),
        "queue": reverse("my_queue"),
        "tokens": reverse("api_tokens"),
        "password": reverse("password_change"),
        "project": reverse("project_home", kwargs=d),
        "items": reverse("item_list", kwargs=d),
        "item": reverse("item_detail", kwargs={**d, "item_pk": item.pk}),
        "timeline": reverse("item_timeline", kwargs={**d, "item_pk": item.pk}),
        "approve": reverse("item_approve", kwargs={**d, "item_pk": item.pk}),
        "adjudication": reverse("adjudication_queue", kwargs=d),
        "approvals": reverse("approval_queue", kwargs=d),
        "approvals-judge-demo": reverse("approval_queue", kwargs=j),
        "assignments": reverse("assignments", kwargs=d),
        "imports": reverse("import_upload", kwargs=d),
        "settings": reverse("project_settings", kwargs=d),
        "instructions": reverse("project_instructions", kwargs=d),
        "members": reverse("members", kwargs=d),
        "questions": reverse("questions", kwargs=d),
        "docs-formats": reverse("docs_page", kwargs={"name": "formats"}),
        "audit": reverse("project_audit", kwargs=j),
        "raters": reverse("rater_quality", kwargs=j),
        "dashboards": reverse("dashboards"),
        "dashboard": reverse("project_dashboard", kwargs=j),
        "criterion": reverse("dashboard_criterion", kwargs={**j, "name": "faithful"}),
        "criterion-ordinal": reverse("dashboard_criterion", kwargs={**j, "name": "clarity"}),
        "criterion-pairwise": reverse("dashboard_criterion", kwargs={**j, "name": "preference"}),
        "disagreements": reverse("dashboard_disagreements", kwargs=j),
        "failures": reverse("dashboard_failures", kwargs=j),
        "dashboard-item": reverse("dashboard_item", kwargs={**j, "item_pk": judged_item.pk}),
        "judges": reverse("judge_list", kwargs=j),
        "judge": reverse("judge_page", kwargs={**j, "name": "faithful-stub"}),
        "run": reverse("run_status", kwargs={**j, "pk": run.pk}),
        "generate": reverse("generate", kwargs=d),
        "scores": reverse("score_list", kwargs={"slug": "invoices"}),
        "admin": reverse("admin:index"),
        "not-found": "/p/no-such-project/",
    }


def _review_path(page, base: str) -> str | None:
    """The rater's review page, claimed with My queue's Start button (a POST)."""
    page.goto(f"{base}/queue/")
    start = page.locator("tr[data-project='demo']").get_by_role("button")
    if not start.count():
        return None
    start.click()
    page.wait_for_load_state()
    return page.url.removeprefix(base)


def _score_path(page, base: str, tmp_path) -> str:
    """The score upload and its run page, through the upload form (alex)."""
    page.goto(f"{base}{reverse('score_list', kwargs={'slug': 'invoices'})}")
    page.get_by_label("Predictions (JSONL)").set_input_files(str(tmp_path / "predictions.jsonl"))
    page.get_by_role("button", name="Score").click()
    page.wait_for_load_state()
    return page.url.removeprefix(base)


def _import_path(page, base: str, tmp_path) -> str:
    """An import through the upload form (alex) lands on its job page."""
    page.goto(f"{base}{reverse('import_upload', kwargs={'slug': 'demo'})}")
    page.get_by_label("File", exact=True).set_input_files(str(tmp_path / "more.csv"))
    page.get_by_label("CSV record kind").select_option("item")
    page.get_by_role("button", name="Import", exact=True).click()
    page.wait_for_load_state()
    return page.url.removeprefix(base)


def _show_held_out(page, base: str) -> None:
    """Held-out figures show once asked for (a logged POST that holds for the session)."""
    page.goto(f"{base}{reverse('project_dashboard', kwargs={'slug': 'judge-demo'})}")
    show = page.get_by_role("button", name="Show held-out figures")
    if show.count():
        show.click()
        page.wait_for_load_state()


def _batch_path(page, base: str) -> str | None:
    """The batch approval page is the answer to the queue's POST: press "Approve all"."""
    page.goto(f"{base}{reverse('approval_queue', kwargs={'slug': 'demo'})}")
    every = page.get_by_role("button", name="Approve all")
    if not every.count():
        return None
    every.click()
    page.wait_for_load_state()
    return page.url.removeprefix(base)


def _gold_toast(page, base: str, item_path: str) -> bool:
    """An action with a toast on a workspace page (alex marks the item as gold): the page it
    lands on is checked like the others, the toast-overlap check included."""
    page.goto(f"{base}{item_path}")
    page.get_by_role("button", name="Mark as gold").click()
    page.wait_for_load_state()
    return page.locator(".messages .message").count() == 1


def _check(page, role: str, name: str, status: int, console: list[str]) -> list[str]:
    problems = []
    if status >= 500:
        problems.append(f"status {status}")
    overflow = page.evaluate(OVERFLOW)
    if overflow > 0:
        problems.append(f"{overflow}px horizontal overflow")
    expected = status >= 400 and all("status of" in text for text in console)
    if console and not expected:
        problems.append(f"console: {console}")
    violations = page.evaluate("window.__cspViolations || []")
    if violations:
        problems.append(f"CSP: {violations}")
    problems += page.evaluate(LAYOUT_SLIPS) + page.evaluate(UNLABELLED)
    problems += page.evaluate(TOAST_OVER_CONTROLS)
    problems += [f"axe: {violation}" for violation in axe_violations(page)]
    unreachable = page.evaluate(UNREACHABLE_BUTTONS)
    if unreachable:
        problems.append(f"primary buttons out of reach: {unreachable}")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(ARTIFACTS / f"site-{role}-{name}.png"), full_page=True)
    return [f"{role} {name}: {p}" for p in problems]


def test_every_page_for_every_demo_role(browser, live_server, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    paths = _site(tmp_path)
    base = live_server.url
    problems: list[str] = []
    seen: dict[str, set[int]] = {}
    for role in ROLES:
        context = browser.new_context(viewport=VIEWPORT)
        context.add_init_script(RECORD_VIOLATIONS)
        with_axe(context)
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda m, c=console: m.type == "error" and c.append(m.text))
        page.on("pageerror", lambda e, c=console: c.append(str(e)))
        page.goto(f"{base}/accounts/login/")
        problems += _check(page, role, "login", 200, console)
        page.get_by_label("Username").fill(role)
        page.get_by_label("Password").fill(f"{role}-demo-2026")
        page.get_by_role("button", name="Log in").click()
        page.wait_for_load_state()
        _show_held_out(page, base)
        extra = {
            "review": _review_path(page, base) if role == "rita" else None,
            "score-run": _score_path(page, base, tmp_path) if role == "alex" else None,
            "import-job": _import_path(page, base, tmp_path) if role == "alex" else None,
            "approval-batch": _batch_path(page, base) if role == "april" else None,
        }
        if extra["approval-batch"]:
            problems += _check(page, role, "approval-batch", 200, console)
        if role == "alex":
            assert _gold_toast(page, base, paths["item"])
            problems += _check(page, role, "item-with-toast", 200, console)
        for name, path in {**paths, **extra}.items():
            if path is None or name == "approval-batch":
                continue
            console.clear()
            response = page.goto(f"{base}{path}")
            seen.setdefault(name, set()).add(response.status)
            problems += _check(page, role, name, response.status, console)
        context.close()
    assert problems == [], "\n".join(problems)
    never_shown = [name for name, codes in seen.items() if 200 not in codes]
    assert never_shown == ["not-found"], seen
