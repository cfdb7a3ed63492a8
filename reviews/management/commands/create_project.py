from django.core.management.base import BaseCommand

from evalsite.management.lookups import refusals, user_or_error
from reviews.models import ResolutionRule
from reviews.services.imports.questions import split_requests
from reviews.services.projects.members import project_create


class Command(BaseCommand):
    help = (
        "Create a project with --admin as its admin. Re-running for a project that exists works "
        "only with --admin naming one of its admins, and changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name")
        parser.add_argument("--admin", metavar="USERNAME", help="make this user a project admin")
        parser.add_argument("--overlap", type=int, help="raters per item (default 2)")
        parser.add_argument("--resolution", choices=ResolutionRule.values)
        parser.add_argument(
            "--questions",
            type=split_requests,
            metavar="criterion:NAME,...",
            help="questions every imported item gets (comma-separated; '' clears them)",
        )

    def handle(self, *args, slug, name, admin, overlap, resolution, questions, **options):
        admin_user = user_or_error(admin)
        with refusals():
            result = project_create(
                actor=admin_user,
                slug=slug,
                name=name,
                overlap=overlap,
                resolution_rule=resolution,
                import_questions=questions,
            )
        project = result.project
        settings = f"overlap {project.overlap}, {project.resolution_rule}"
        if result.created:
            self.stdout.write(f"created project {project.slug} ({settings})")
        else:
            self.stdout.write(f"project {project.slug} exists ({settings}): nothing changed")
