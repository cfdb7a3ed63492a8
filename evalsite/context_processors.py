"""Which main-navigation section the current page belongs to."""

_SECTIONS = {
    "queue": ("my_queue", "review", "queue"),
    "dashboards": ("dashboard", "project_dashboard", "criterion", "disagreement"),
    # The user menu's pages (API tokens, password) belong to no section of the main navigation.
    "": ("api_token", "password_change"),
}


def navigation(request):
    match = getattr(request, "resolver_match", None)
    name = (match.url_name or "") if match else ""
    for section, prefixes in _SECTIONS.items():
        if name.startswith(prefixes):
            return {"nav": section}
    return {"nav": "projects"}
