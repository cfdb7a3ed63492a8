"""Checks a browser test runs in the page (JavaScript returning what it found)."""

# Visible form controls a screen reader cannot name (no <label>, aria-label or title).
UNLABELLED = """
() => [...document.querySelectorAll("input:not([type=hidden], [type=submit]), select, textarea")]
  .filter((el) => el.offsetParent !== null)
  .filter((el) => ![...el.labels].some((l) => l.textContent.trim())
    && !el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby") && !el.title)
  .map((el) => `unlabelled ${el.tagName.toLowerCase()} ${el.name || el.id}`)
"""
