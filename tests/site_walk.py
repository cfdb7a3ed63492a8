"""Every URL pattern of the site, walked from the root resolver, with real values for its
parameters (tests/test_query_counts.py visits them all as each role)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.urls import URLPattern, URLResolver, get_resolver, reverse


@dataclass(frozen=True)
class Route:
    """One URL pattern: its name (namespaced), full route, parameters and view module."""

    name: str | None
    route: str
    params: tuple[str, ...]
    module: str

    def url(self, values: dict[str, str]) -> str:
        return reverse(self.name, kwargs={p: values[p] for p in self.params})


def _params(pattern) -> list[str]:
    return list(pattern.regex.groupindex)


def _walk(patterns, prefix: str, namespace: str | None, params: list[str]):
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        found = params + _params(pattern.pattern)
        if isinstance(pattern, URLResolver):
            space = namespace
            if pattern.namespace:
                space = f"{namespace}:{pattern.namespace}" if namespace else pattern.namespace
            yield from _walk(pattern.url_patterns, route, space, found)
        elif isinstance(pattern, URLPattern):
            name = pattern.name and (f"{namespace}:{pattern.name}" if namespace else pattern.name)
            yield Route(name, route, tuple(found), pattern.callback.__module__)


def routes() -> list[Route]:
    """Every pattern under the root URLconf, in order."""
    return list(_walk(get_resolver().url_patterns, "", None, []))


def admin_model_of(name: str, models: dict[str, type]) -> type | None:
    """The model of an admin URL name (`admin:reviews_item_change` → Item), if any."""
    match = re.fullmatch(r"admin:(\w+)_(changelist|add|change|delete|history)", name)
    return match and models.get(match.group(1))
