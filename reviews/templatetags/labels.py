"""`{{ key|spaced }}`: a stored key (`generated_version`) as words for the page."""

from django import template

register = template.Library()


@register.filter
def spaced(key) -> str:
    return str(key).replace("_", " ")
