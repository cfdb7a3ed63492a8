"""What every management command does with its options: find the named rows, report errors.

A missing project or user and a refused service call end the command with one line naming
what was wrong (a `CommandError`, exit status 1), never a traceback.
"""

from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from reviews.models import Project


def project_or_error(slug: str, hint: str = "") -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"No project {slug!r}{hint}.")
    return project


def user_or_error(username: str | None):
    """The named user, or None when no name was given."""
    if not username:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"No user named {username!r}.")
    return user


@contextmanager
def refusals(*errors: type[Exception], prefix: str = ""):
    """Report a service's refusal (one of `errors`, or a ValidationError) as the command's error."""
    try:
        yield
    except ValidationError as error:
        raise CommandError(prefix + "; ".join(error.messages)) from None
    except errors as error:
        raise CommandError(f"{prefix}{error}") from None
