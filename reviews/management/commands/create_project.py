from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from reviews.models import ResolutionRule
from reviews.services.import_questions import split_requests
from reviews.services.projects import project_create


class Command(BaseCommand):
    help = "Create a project (idempotent): re-running changes only the settings given."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name")
        parser.add_argument("--admin", metavar="USERNAME", help="make this user a project admin")
        parser.add_argument("--overlap", type=int, help="raters per item (default 2)")
        parser.add_argument("--resolution", choices=ResolutionRule.values)
        parser.add_argument(
            "--questions",
            metavar="criterion:NAME,...",
            help="questions every imported item gets (comma-separated; '' clears them)",
        )

    def handle(self, *args, slug, name, admin, overlap, resolution, questions, **options):
        admin_user = None
        if admin:
            try:
                admin_user = get_user_model().objects.get(username=admin)
            except get_user_model().DoesNotExist:
                raise CommandError(f"No user named {admin!r}.") from None
        try:
            result = project_create(
                actor=admin_user,
                slug=slug,
                name=name,
                admin=admin_user,
                overlap=overlap,
                resolution_rule=resolution,
                import_questions=None if questions is None else split_requests(questions),
            )
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from None
        project = result.project
        verb = "created" if result.created else "exists"
        self.stdout.write(
            f"{verb} project {project.slug} (overlap {project.overlap}, {project.resolution_rule})"
        )
