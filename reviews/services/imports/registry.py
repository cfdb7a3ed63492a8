"""The import registry: every file format, record kind and question source an import knows, and
the one question definer (how the question builder stores what `criterion:NAME` then asks).

Both apps fill it through `register_import`, the one way in, when their import modules load
(each app's `ready`). A name is taken once: a second registration under the same name, from
whichever app, raises at start-up instead of silently replacing the first. Nothing depends on
which app's modules were imported first: listings come back in a fixed order (formats by their
`rank`, then name; everything else by name), and two formats may not both claim a container
(zip, csv) the detector hands to one of them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from django.core.exceptions import ImproperlyConfigured


class ImportKind(StrEnum):
    FORMAT = "import format"  # an Importer class (pipeline.Importer), named by its sniffer
    RECORDS = "record kind"  # a RecordSink class (records.RecordSink), or reviews' ItemBatch
    QUESTIONS = "question source"  # (project, name) -> QuestionSpec (questions.QuestionSource)
    # How the question builder stores a definition (projects/questions.QuestionDefiner): one.
    DEFINER = "question definer"


_TAKEN: dict[ImportKind, dict[str, Any]] = {kind: {} for kind in ImportKind}


def _owner(handler: Any) -> str:
    return f"{handler.__module__}.{handler.__qualname__}"


def register_import(kind: ImportKind, name: str, handler: Any) -> Any:
    """Add `handler` under `name`; returns it. Refuses an empty name, a name already taken
    (even by the same handler: a module registering twice is a bug too) and a second format for
    a container."""
    if not name:
        raise ImproperlyConfigured(f"a {kind} needs a name ({_owner(handler)})")
    taken = _TAKEN[kind]
    if name in taken:
        raise ImproperlyConfigured(
            f"{kind} {name!r} is registered twice: by {_owner(taken[name])} and by "
            f"{_owner(handler)}"
        )
    if kind is ImportKind.FORMAT and (container := handler.sniffer.container):
        for other in taken.values():
            if other.sniffer.container == container:
                raise ImproperlyConfigured(
                    f"{container} files are read by {_owner(other)}: {_owner(handler)} "
                    "cannot read them too"
                )
    taken[name] = handler
    return handler


def registered(kind: ImportKind) -> dict[str, Any]:
    """name -> handler, in a fixed order whatever the order of registration."""
    taken = _TAKEN[kind]
    if kind is ImportKind.FORMAT:
        names = sorted(taken, key=lambda name: (taken[name].rank, name))
    else:
        names = sorted(taken)
    return {name: taken[name] for name in names}
