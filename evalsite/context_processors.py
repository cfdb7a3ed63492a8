"""Which main-navigation section the current page belongs to, and the page frame's links."""

from functools import cache

from django.urls import get_script_prefix, reverse

_SECTIONS = {
    "queue": ("my_queue", "review", "queue"),
    "dashboards": ("dashboard", "project_dashboard", "criterion", "disagreement"),
    # The user menu's pages (API tokens, password) belong to no section of the main navigation.
    "": ("api_token", "password_change"),
}
# The URLs every page's frame shows (base.html: `{{ links.my_queue }}`; `admin:index` is
# `links.admin_index`).
_LINKS = (
    "home", "project_list", "my_queue", "dashboards", "api_tokens", "password_change",
    "admin:index", "logout",
)  # fmt: skip


def navigation(request):
    match = getattr(request, "resolver_match", None)
    name = (match.url_name or "") if match else ""
    links = _links(get_script_prefix())
    for section, prefixes in _SECTIONS.items():
        if name.startswith(prefixes):
            return {"nav": section, "links": links}
    return {"nav": "projects", "links": links}


@cache
def _links(prefix: str) -> dict[str, str]:
    """Worked out once per script prefix (what `reverse` depends on here): a `{% url %}` reverses
    its name on every render, and the frame's eight were a sixth of a page's template time."""
    return {name.replace(":", "_"): reverse(name) for name in _LINKS}
