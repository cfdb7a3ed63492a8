"""Questions a project defines itself (the builder on the new-project form and the Questions
page, and `manage.py criterion`): one definition, checked by one form
(`reviews/forms_questions.py`), stored by the app that owns such questions.

Reviews does not know what a criterion is: `judging` registers the definer for `criterion`
in the import registry (`reviews/services/imports/registry.py: register_import`), as it
registers the question source that asks it on import. A definer returns the request an import names
(`criterion:NAME`) and the version it stored; it raises ValidationError keyed by the form's
field names, so the refusal sits beside the field that caused it, in the browser and on the
command line alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.db import models, transaction

from reviews.models import Project
from reviews.services.imports.registry import ImportKind, registered
from reviews.services.projects.members import is_project_admin, project_settings_update


class QuestionType(models.TextChoices):
    """What a rater is asked to do: the builder's *kind* (how the labels behave)."""

    PASS_FAIL = "pass_fail", "Pass / fail"  # noqa: S105 (a kind, not a password)
    CHOICE = "choice", "Choice among labels"
    ORDINAL = "ordinal", "Ordinal rating (labels low to high)"
    FREE_TEXT = "free_text", "Free text"
    PAIRWISE = "pairwise", "Pairwise: answer A or B"


PAIRWISE_LABELS = ("A", "B", "tie")


@dataclass(frozen=True)
class QuestionDefinition:
    name: str
    kind: str  # a QuestionType
    labels: list[str] = field(default_factory=list)
    positive: str = ""  # the passing label (empty: none)
    critical: bool = False
    text: str = ""  # the guidance a rater reads above the labels


@dataclass(frozen=True)
class DefinedQuestion:
    request: str  # what an import asks for: "criterion:NAME"
    version: str
    created: bool  # False: the same definition was already the newest version


QuestionDefiner = Callable[[Project, object, QuestionDefinition], DefinedQuestion]


def _definer() -> QuestionDefiner:
    """The one definer registered (`register_import(ImportKind.DEFINER, ...)`)."""
    definers = list(registered(ImportKind.DEFINER).values())
    if len(definers) != 1:
        raise ImproperlyConfigured(
            "no app defines questions (is judging installed?)"
            if not definers
            else "several apps define questions: one definer only"
        )
    return definers[0]


def question_define(
    *, project: Project, actor, definition: QuestionDefinition, ask_on_import: bool = False
) -> DefinedQuestion:
    """Store `definition` (a new version when its labels, text or flags changed; the same one
    is no change). `ask_on_import`: every later import asks it too (the new-project form)."""
    definer = _definer()
    if actor is not None and not is_project_admin(actor, project):  # None: the console
        raise PermissionDenied("Only the project's admins define its questions.")
    with transaction.atomic():
        defined = definer(project, actor, definition)
        asked = list(project.import_questions)
        if ask_on_import and defined.request not in asked:
            project_settings_update(
                actor=actor,
                project=project,
                changes={"import_questions": [*asked, defined.request]},
            )
    return defined
