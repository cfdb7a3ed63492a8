"""In the browser: approve, correct to a new version, export all three formats, verify; every
edit issue 10 lists then fails naming the item. And batch approval of 20 items, one password."""

import io
import json
import zipfile

import pytest
from django.core.management import CommandError, call_command
from playwright.sync_api import expect

from reviews.models import Approval, Role
from tests.factories import PASSWORD, ProjectFactory, member

pytestmark = pytest.mark.django_db(transaction=True)


def _resolved(project, review_item, rate, count, *, prefix="case"):
    raters = [member(project, Role.RATER, username=f"r{n}") for n in (1, 2)]
    items = []
    for n in range(count):
        item = review_item(project, external_id=f"{prefix}-{n:02d}")
        item.metadata = {
            "review_file": {
                "case_id": item.external_id,
                "claims": [{"path": "$.currency", "expected_value": "EUR"}],
                "review_items": [
                    {"path": "$.total", "reason": "disagreement", "candidates": []},
                ],
            }
        }
        item.save(update_fields=["metadata"])
        for rater in raters:
            rate(rater, item, {"$.total": "1,200.00"})
        items.append(item)
    return items


def _download(page, button, folder):
    with page.expect_download() as info:
        page.get_by_role("button", name=button).click()
    data = io.BytesIO(info.value.path().read_bytes())
    with zipfile.ZipFile(data) as archive:
        archive.extractall(folder)
    return folder


def _verify(path, capsys):
    capsys.readouterr()
    try:
        call_command("verify_approval", str(path))
    except CommandError:
        return False, capsys.readouterr().out
    return True, capsys.readouterr().out


def _sign(page, password=PASSWORD, reason=None):
    page.get_by_label("I have checked each decision").check()
    if reason:
        page.get_by_label("Why correct approved ground truth?").fill(reason)
    page.get_by_label("Your password").fill(password)
    page.get_by_role("button", name="Sign and approve").click()


def test_approve_correct_export_verify_and_every_edit_fails(
    page, live_server, login, screenshot, tmp_path, capsys, review_item, rate
):
    project = ProjectFactory(slug="trust")
    (item,) = _resolved(project, review_item, rate, 1)
    member(project, Role.ADJUDICATOR, username="adj")
    member(project, Role.APPROVER, Role.ADMIN, username="appr")
    page.set_viewport_size({"width": 1280, "height": 800})
    base = f"{live_server.url}/p/{project.slug}"

    login("appr", PASSWORD)
    page.goto(f"{base}/items/{item.pk}/approve/")
    screenshot("approve-with-evidence", full_page=False)
    _sign(page)
    expect(page.get_by_text(f"Approved {item}: ground truth v2")).to_be_visible()
    page.go_back()  # Back shows the approved state, never a stale "Cannot approve yet"
    expect(page.get_by_role("heading", name="Approved")).to_be_visible()
    expect(page.get_by_text("Cannot approve yet")).to_have_count(0)
    page.context.clear_cookies()

    login("adj", PASSWORD)
    page.goto(f"{base}/items/{item.pk}/")
    panel = page.locator("li.question", has=page.locator("code", has_text="$.total"))
    panel.get_by_text("Correct this decision").click()
    panel.get_by_text("1,290.00").last.click()
    panel.get_by_placeholder("Reason (required)").fill("Page 2 shows 1,290.00")
    panel.get_by_role("button", name="Save decision").click()
    expect(page.get_by_text("Decided $.total.")).to_be_visible()
    page.context.clear_cookies()

    login("appr", PASSWORD)
    page.goto(f"{base}/items/{item.pk}/approve/")
    expect(page.get_by_text("(correcting v2)")).to_be_visible()
    _sign(page, reason="The adjudicator corrected the total")
    expect(page.get_by_text(f"Approved {item}: ground truth v3")).to_be_visible()

    out = tmp_path / "export"
    page.goto(f"{base}/")
    screenshot("project-export", full_page=True)
    for button in (
        "Review files (.zip of .json)",
        "References (.zip of .json)",
        "CSV + signatures (.zip)",
    ):
        _download(page, button, out)
    ok, text = _verify(out, capsys)
    assert ok, text
    assert text.count("OK   case-00: v3, version 3") == 3, text
    _each_edit_fails(out, tmp_path, capsys)


def _copy(out, tmp_path, name):
    folder = tmp_path / name
    folder.mkdir()
    for file in out.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    return folder


def _edit(folder, name, change):
    path = folder / name
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _each_edit_fails(out, tmp_path, capsys):
    reference = "case-00.reference.json"
    edits = {
        "case-id": lambda f: _edit(f, reference, lambda d: d.update(case_id="case-99")),
        "version": lambda f: _edit(f, reference, lambda d: d.update(version=7)),
        "approved-by": lambda f: _edit(f, reference, lambda d: d.update(approved_by="eve")),
        "approved-at": lambda f: _edit(
            f, reference, lambda d: d.update(approved_at="2020-01-01T00:00:00Z")
        ),
        "duplicate-key": lambda f: (f / reference).write_text(
            (f / reference).read_text().replace('"rows":', '"rows": [], "rows":', 1)
        ),
        "tampered-jsonl": lambda f: (f / "more.JSONL").write_text(
            (f / reference).read_text().replace("\n", "").replace("1,290.00", "1,999.00") + "\n"
        ),
        "csv-row": lambda f: (f / "trust-ground-truth.csv").write_text(
            (f / "trust-ground-truth.csv").read_text().replace("1,290.00", "1,291.00")
        ),
    }
    for name, edit in edits.items():
        folder = _copy(out, tmp_path, name)
        edit(folder)
        ok, text = _verify(folder, capsys)
        assert not ok, f"{name}: {text}"
        failing = [line for line in text.splitlines() if line.startswith("FAIL")]
        assert failing, f"{name}: {text}"
        named = "case-99" if name == "case-id" else "case-00"
        assert any(named in line or "duplicate" in line for line in failing), f"{name}: {text}"


def test_batch_approval_of_twenty_items_with_one_password(
    page, live_server, login, screenshot, tmp_path, capsys, review_item, rate
):
    project = ProjectFactory(slug="batch")
    _resolved(project, review_item, rate, 20, prefix="b")
    member(project, Role.APPROVER, username="appr")
    page.set_viewport_size({"width": 1280, "height": 800})

    login("appr", PASSWORD)
    page.goto(f"{live_server.url}/p/{project.slug}/approvals/")
    page.get_by_role("button", name="Approve all 20 waiting…").click()
    expect(page.get_by_role("heading", name="Approve 20 of 20 selected items")).to_be_visible()
    screenshot("batch-approve", full_page=True)
    page.get_by_label("I have checked each decision").check()
    page.get_by_label("Your password").fill(PASSWORD)
    page.get_by_role("button", name="Sign and approve 20 items").click()
    expect(page.get_by_role("heading", name="Approved 20 items")).to_be_visible()
    assert Approval.objects.filter(item__project=project).count() == 20
    assert len(set(Approval.objects.values_list("signature", flat=True))) == 20

    out = tmp_path / "batch"
    call_command(
        "export_ground_truth", "--project", project.slug, "--format", "reference", "--out", out
    )
    ok, text = _verify(out, capsys)
    assert ok and text.count("OK   b-") == 20, text
