"""What every management command does with its options: find the named rows, report errors.

A missing project, user or named row (a judge, a panel), options a page's form refuses and a
refused service call end the command with one line naming what was wrong (a `CommandError`, exit status 1), never a
traceback. A command about one project is a `ProjectCommand`: it takes `--project SLUG` and
works on the row; one that prints a report is a `ReportCommand` (`--format markdown|json`,
`--seed`).
"""

import argparse
import json
from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from evalsite.posting import errors_text
from reviews.models import Project


def project_or_error(slug: str, hint: str = "") -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"No project {slug!r}{hint}.")
    return project


def named_or_error(model, project: Project, name: str, noun: str):
    """The `model` row `project` calls `name` (a judge, a panel: unique by project and name)."""
    found = model.objects.filter(project=project, name=name).first()
    if found is None:
        raise CommandError(f"No {noun} {name!r} in project {project.slug!r}.")
    return found


def user_or_error(username: str | None):
    """The named user, or None when no name was given."""
    if not username:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"No user named {username!r}.")
    return user


def form_or_error(form) -> dict:
    """The cleaned data of a bound form (the same one the page posts), or the command's error
    naming each refused field: a command's options pass the page's rules, no looser."""
    if not form.is_valid():
        raise CommandError(errors_text(form))
    return form.cleaned_data


@contextmanager
def refusals(*errors: type[Exception], prefix: str = ""):
    """Report a service's refusal (one of `errors`, or a ValidationError) as the command's error."""
    try:
        yield
    except ValidationError as error:
        raise CommandError(prefix + "; ".join(error.messages)) from None
    except errors as error:
        raise CommandError(f"{prefix}{error}") from None


class ProjectCommand(BaseCommand):
    """A command about one project, named by `--project SLUG`.

    `handle_project` gets the project's row in place of the slug; a refusal of one of the
    `refused` kinds (or a ValidationError) ends the command with its one line.
    """

    refused: tuple[type[Exception], ...] = ()
    missing_hint = ""  # after "No project 'x'": how to make one, where that helps

    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.add_argument("--project", required=True, metavar="SLUG")
        return parser

    def handle(self, *args, project, **options):
        found = project_or_error(project, hint=self.missing_hint)
        with refusals(*self.refused):
            self.handle_project(found, **options)

    def handle_project(self, project, **options):
        raise NotImplementedError


def _seed(text: str) -> int:
    """A bootstrap seed: a whole number from 0 to 2**63 - 1 (numpy takes no negative seed)."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if not 0 <= seed < 2**63:
        raise argparse.ArgumentTypeError(f"a whole number from 0 to 2**63 - 1, not {text!r}")
    return seed


class ReportCommand(ProjectCommand):
    """A project command that prints a report with bootstrap intervals: Markdown (default) or
    JSON with `--format`, the resampling seeded with `--seed` (default 0)."""

    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.add_argument("--format", choices=("json", "markdown"), default="markdown")
        parser.add_argument("--seed", type=_seed, default=0, help="bootstrap seed (default 0)")
        return parser

    def write_report(self, report: dict, *, format: str, markdown) -> None:
        """Print `report` as JSON, or as the Markdown `markdown(report)` renders."""
        if format == "json":
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(markdown(report))
