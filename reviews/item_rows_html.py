"""The item list's rows written in Python, not by the template engine: fifty rows per page of
eight values each were most of what the engine did on the page (issue #33: the item list at
15x Label Studio). The HTML is the template's own, character for character
(tests/reviews/test_item_rows_html.py renders the template it replaced and compares)."""

from __future__ import annotations

from html import escape  # what Django's escape filter calls (conditional_escape of a str)

from django.utils.safestring import SafeString, mark_safe

from reviews.selectors_pages import ItemRow
from reviews.templatetags.badges import status_badge


def _row(row: ItemRow, ticks: bool) -> str:
    external_id = escape(str(row.external_id))
    tick = (
        f'<td><input type="checkbox" name="item" value="{row.pk}"'
        f' aria-label="Tick {external_id}"></td>'
        if ticks
        else ""
    )
    return (
        f'\n  <tr data-item="{external_id}">\n    \n    {tick}\n'
        f'    <td><a href="{escape(row.href)}">{external_id}</a></td>\n'
        f'    <td><span class="badge {escape(status_badge(row.status))}">'
        f"{escape(str(row.status_label))}</span></td>\n"
        f'    <td class="num">{escape(row.questions)}</td>\n'
        f"    <td>{escape(row.updated)}</td>\n  </tr>\n  "
    )


def item_rows_html(rows: list[ItemRow], *, ticks: bool, filtered: bool) -> SafeString:
    """The table body's rows (with a tick box each when the page has bulk actions), or the one
    row that says there are none."""
    if not rows:
        match = " match" if filtered else ""
        empty = f'\n  <tr><td colspan="5" class="empty">No items{match}.</td></tr>\n  '
        return mark_safe(empty)  # noqa: S308 (constant text)
    return mark_safe("".join(_row(row, ticks) for row in rows))  # noqa: S308 (escaped above)
