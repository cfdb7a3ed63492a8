from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from reviews.models import Project
from reviews.services.approved_imports import KeyRefused, trusted_key_register


class Command(BaseCommand):
    help = (
        "Trust another signer's Ed25519 public key for a project's approved-file imports "
        "(recorded with who registered it, and when)."
    )

    def add_arguments(self, parser):
        parser.add_argument("pem", type=Path, metavar="PEM")
        parser.add_argument("--project", required=True, metavar="SLUG")
        parser.add_argument("--by", required=True, metavar="USERNAME", help="a project admin")
        parser.add_argument("--label", default="", help="whose key this is")

    def handle(self, *args, pem: Path, project: str, by: str, label: str, **options):
        try:
            target = Project.objects.get(slug=project)
        except Project.DoesNotExist:
            raise CommandError(f"No project {project!r}.") from None
        actor = get_user_model().objects.filter(username=by).first()
        if actor is None:
            raise CommandError(f"No user {by!r}.")
        try:
            text = pem.read_text(encoding="utf-8")
            key = trusted_key_register(actor=actor, project=target, pem=text, label=label)
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"{pem}: {error}") from None
        except KeyRefused as error:
            raise CommandError(f"{pem}: {error}") from None
        self.stdout.write(f"project {target.slug} now trusts key {key.key_id} ({by})")
