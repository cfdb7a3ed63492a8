from django.core.management.base import BaseCommand, CommandError

from reviews.management.lookups import project_or_error, refusals, user_or_error
from reviews.models import Membership, Role
from reviews.services.projects import membership_add


class Command(BaseCommand):
    help = "Give a user a role in a project (idempotent: a role already held changes nothing)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, metavar="SLUG")
        parser.add_argument("username", metavar="USER")
        parser.add_argument("--role", required=True, choices=Role.values)

    def handle(self, *args, project, username, role, **options):
        hint = f" (create it first: manage.py create_project {project})"
        project_row = project_or_error(project, hint=hint)
        user = user_or_error(username)
        if not user.is_active:
            raise CommandError(f"User {username!r} is inactive: activate the account first.")
        held = Membership.objects.filter(project=project_row, user=user, role=role).exists()
        with refusals():
            membership_add(actor=None, project=project_row, user=user, role=role)
        verb = "already holds" if held else "now holds"
        self.stdout.write(f"{username} {verb} {role} in {project_row.slug}")
