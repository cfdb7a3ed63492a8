"""Checks a browser test runs in the page (JavaScript returning what it found)."""

# Visible form controls a screen reader cannot name (no <label>, aria-label or title).
UNLABELLED = """
() => [...document.querySelectorAll("input:not([type=hidden], [type=submit]), select, textarea")]
  .filter((el) => el.offsetParent !== null)
  .filter((el) => ![...el.labels].some((l) => l.textContent.trim())
    && !el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby") && !el.title)
  .map((el) => `unlabelled ${el.tagName.toLowerCase()} ${el.name || el.id}`)
"""

# Tab through the page (up to `limit` stops): each control the keyboard reaches, with whether its
# focus is drawn (an outline, or a box shadow for the styled choices). The body or a control
# whose focus cannot be seen is a stop the keyboard user loses.
FOCUS_STOP = """
() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  const ring = (s) => (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== "none";
  const label = el.closest("label");
  const shown = ring(style) || (label && ring(getComputedStyle(label)));
  return {name: (el.getAttribute("aria-label") || el.textContent || el.name || el.id || el.tagName).trim().slice(0, 40),
          tag: el.tagName.toLowerCase(), shown};
}
"""


def keyboard_stops(page, limit: int = 60) -> list[dict]:
    """The controls Tab reaches from the top of the page, in order, each with `shown`."""
    page.evaluate("window.scrollTo(0, 0); document.activeElement && document.activeElement.blur()")
    stops = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        stop = page.evaluate(FOCUS_STOP)
        if stop is None or (stops and stop == stops[0]):
            break
        stops.append(stop)
    return stops
