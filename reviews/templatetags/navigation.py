"""Links to project pages other apps add (reviews/navigation.py), by key, never by URL name."""

from django import template

from reviews import navigation

register = template.Library()


@register.simple_tag
def project_page_url(key, project) -> str:
    return navigation.project_page_url(key, project)


@register.simple_tag
def project_tabs(access, group) -> list[tuple[str, str]]:
    return navigation.project_tabs(access, group)
