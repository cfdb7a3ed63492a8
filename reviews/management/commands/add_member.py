from django.core.management.base import CommandError

from evalsite.management.lookups import ProjectCommand, user_or_error
from reviews.models import Membership, Role
from reviews.services.projects.members import membership_add


class Command(ProjectCommand):
    help = "Give a user a role in a project (idempotent: a role already held changes nothing)."
    missing_hint = " (create it first with create_project)"

    def add_arguments(self, parser):
        parser.add_argument("username", metavar="USER")
        parser.add_argument("--role", required=True, choices=Role.values)

    def handle_project(self, project, *, username, role, **_):
        user = user_or_error(username)
        if not user.is_active:
            raise CommandError(f"User {username!r} is inactive: activate the account first.")
        held = Membership.objects.filter(project=project, user=user, role=role).exists()
        membership_add(actor=None, project=project, user=user, role=role)
        verb = "already holds" if held else "now holds"
        self.stdout.write(f"{username} {verb} {role} in {project.slug}")
