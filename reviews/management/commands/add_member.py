from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from reviews.models import Membership, Project, Role
from reviews.services.projects import membership_add


class Command(BaseCommand):
    help = "Give a user a role in a project (idempotent: a role already held changes nothing)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, metavar="SLUG")
        parser.add_argument("username", metavar="USER")
        parser.add_argument("--role", required=True, choices=Role.values)

    def handle(self, *args, project, username, role, **options):
        try:
            project_row = Project.objects.get(slug=project)
        except Project.DoesNotExist:
            raise CommandError(
                f"No project {project!r} (create it first: manage.py create_project {project})."
            ) from None
        try:
            user = get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist:
            raise CommandError(f"No user named {username!r}.") from None
        if not user.is_active:
            raise CommandError(f"User {username!r} is inactive: activate the account first.")
        held = Membership.objects.filter(project=project_row, user=user, role=role).exists()
        try:
            membership_add(actor=None, project=project_row, user=user, role=role)
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from None
        verb = "already holds" if held else "now holds"
        self.stdout.write(f"{username} {verb} {role} in {project_row.slug}")
