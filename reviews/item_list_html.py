"""The item list's filter fields and bulk actions written in Python, as its rows are
(reviews/item_rows_html.py): the template engine's loops over them, their labels and ids, were a
third of the page's CPU after the rows (issue #33: the item list at 15x Label Studio). The HTML
is the template's own, character for character (tests/reviews/test_item_list_html.py renders
the template it replaced and compares); each widget is still the form's own (`str(field)`).
"""

from __future__ import annotations

from django.utils.safestring import SafeString, mark_safe

from evalsite.form_renderer import conditional_escape

PAGING = ("after", "before")  # the list's keyset fields: links, not filters to show


def filters_html(form) -> SafeString:
    """Each filter of the list's form with its label, the paging fields left out."""
    return mark_safe(  # noqa: S308 (labels and ids escaped, widgets are the form's own HTML)
        "".join(
            f'\n  <div class="field"><label for="{conditional_escape(field.id_for_label)}">'
            f"{conditional_escape(field.label)}</label>{field}</div>\n  "
            for field in form
            if field.name not in PAGING
        )
    )


def bulk_actions_html(actions) -> SafeString:
    """Each bulk action's fields (their labels for screen readers only) and its button."""
    return mark_safe(  # noqa: S308 (as above)
        "".join(
            f'\n    <div class="bulk-action" data-bulk="{conditional_escape(action.name)}">\n      '
            + "".join(
                f'<label class="visually-hidden" for="{conditional_escape(field.id_for_label)}">'
                f"{conditional_escape(field.label)}</label>{field}"
                for field in action_form
            )
            + f'\n      <button type="submit" class="button" name="action"'
            f' value="{conditional_escape(action.name)}" title="{conditional_escape(action.help)}">'
            f"{conditional_escape(action.label)}</button>\n    </div>"
            for action, action_form in actions
        )
    )
