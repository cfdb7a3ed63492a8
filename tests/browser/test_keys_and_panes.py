"""Found in a whole-site pass at 1280x800 (mouse and keyboard, not only scripted focus):

- the adjudication page's questions scroll in their pane, so a mouse reaches the last one;
- Enter on a focused link or button of the review page activates it (zoom, next…) instead of
  submitting the item;
- a message (a refused submit) never covers the footer's Submit and Skip buttons;
- the decide forms' "type the value" radio has a name.
"""

import re

import pytest
from playwright.sync_api import expect

from reviews.models import Project, Role
from tests.browser.page_checks import UNLABELLED
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db(transaction=True)

VIEWPORT = {"width": 1280, "height": 800}
FIELDS = {f"$.field_{n}": [f"{n},100.00", f"{n},190.00"] for n in range(1, 7)}

# The point at an element's centre (right edge for a wide one) is the element itself.
HIT = """(el) => {
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.right - 6, r.top + r.height / 2);
  return hit === el || el.contains(hit);
}"""


def test_a_mouse_scrolls_the_adjudication_questions_to_the_last(
    page, live_server, login, review_item, rate, attach_evidence
):
    project = Project.objects.create(slug="adj-scroll", name="Adjudication scroll", overlap=2)
    first, second = (member(project, Role.RATER, username=f"r{n}") for n in (1, 2))
    member(project, Role.ADJUDICATOR, username="adj")
    item = review_item(project, FIELDS)
    attach_evidence(item)
    rate(first, item, {key: values[0] for key, values in FIELDS.items()})
    rate(second, item, {key: values[1] for key, values in FIELDS.items()})

    page.set_viewport_size(VIEWPORT)
    login("adj", PASSWORD)
    page.goto(f"{live_server.url}/p/adj-scroll/items/{item.pk}/")
    last = page.locator("#questions > li.question").last
    expect(last.get_by_role("button", name="Save decision")).to_be_attached()
    # The window never scrolls (the viewer's toolbar stays); the questions' pane does.
    assert page.evaluate("document.documentElement.scrollHeight") == VIEWPORT["height"]
    page.mouse.move(1000, 500)
    save = last.get_by_role("button", name="Save decision")
    assert not save.evaluate(HIT)  # below the fold at first
    for _ in range(10):
        page.mouse.wheel(0, 400)
    # Out of the mouse's reach, this times out.
    page.wait_for_function(HIT, arg=save.element_handle(), timeout=5000)
    expect(page.locator("#page-label")).to_be_visible()
    assert page.evaluate(UNLABELLED) == []  # the decide forms' radios and boxes are named


def test_enter_on_a_focused_button_activates_it_and_never_submits(
    page, live_server, login, start_review, review_item, attach_evidence
):
    project = Project.objects.create(slug="enter-keys", name="Enter keys", overlap=1)
    member(project, Role.RATER, username="kbd")
    attach_evidence(review_item(project, {"$.total": ["1,200.00", "1,290.00"]}))
    page.set_viewport_size(VIEWPORT)
    login("kbd", PASSWORD)
    start_review(project.slug)
    review_url = page.url
    submits = []
    page.on("request", lambda r: r.method == "POST" and "/submit/" in r.url and submits.append(r))

    zoom = page.locator("#evidence").get_by_role("button", name="Zoom in")
    expect(page.locator("#zoom-label")).to_have_text("fit")
    zoom.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#zoom-label")).not_to_have_text("fit")  # it zoomed
    note = page.locator("details.note summary").first
    note.focus()
    page.keyboard.press("Enter")
    expect(page.locator("details.note").first).to_have_attribute("open", "")
    assert submits == [] and page.url == review_url

    # Elsewhere Enter still submits (here refused: nothing answered), and the refusal's message
    # leaves Submit and Skip in reach.
    page.locator("#questions > li.question").first.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".message")).to_contain_text("Answer every question")
    assert len(submits) == 1
    for name in ("Submit & next", "Skip"):
        button = page.locator(".answer-footer").get_by_role("button", name=name)
        assert button.evaluate(HIT), f"{name} is covered"


def test_the_user_menu_closes_on_escape_and_on_a_click_elsewhere(page, live_server, login):
    project = Project.objects.create(slug="menu", name="Menu")
    member(project, Role.ADMIN, username="menu-admin")
    page.set_viewport_size(VIEWPORT)
    login("menu-admin", PASSWORD)
    menu = page.locator("details.usermenu")
    tokens = menu.get_by_role("link", name="API tokens")
    menu.locator("summary").click()
    expect(tokens).to_be_visible()
    page.keyboard.press("Escape")
    expect(tokens).to_be_hidden()
    expect(menu.locator("summary")).to_be_focused()
    menu.locator("summary").click()
    expect(tokens).to_be_visible()
    page.locator("main h1").first.click()
    expect(tokens).to_be_hidden()


def test_closing_the_skip_dialog_puts_focus_back_on_the_question(
    page, live_server, login, start_review, review_item, attach_evidence
):
    project = Project.objects.create(slug="skip-focus", name="Skip focus", overlap=1)
    member(project, Role.RATER, username="skipper")
    attach_evidence(review_item(project, {"$.a": ["1", "2"], "$.b": ["3", "4"]}))
    page.set_viewport_size(VIEWPORT)
    login("skipper", PASSWORD)
    start_review(project.slug)
    first = page.locator("#questions > li.question").first
    expect(first).to_have_class(re.compile(r"\bcurrent\b"))  # current, though not focused yet
    for close in ("Escape", "Cancel"):
        page.keyboard.press("s")
        expect(page.locator("#skip-dialog")).to_be_visible()
        if close == "Escape":
            page.keyboard.press("Escape")
        else:
            page.locator("#skip-dialog").get_by_role("button", name="Cancel").click()
        expect(page.locator("#skip-dialog")).to_be_hidden()
        expect(first).to_be_focused()
