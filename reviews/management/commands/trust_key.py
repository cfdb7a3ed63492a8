from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from reviews.management.lookups import project_or_error, user_or_error
from reviews.services.approved_imports import KeyRefused, trusted_key_register


class Command(BaseCommand):
    help = (
        "Trust another signer's Ed25519 public key for a project's approved-file imports "
        "(recorded with who registered it, and when)."
    )

    def add_arguments(self, parser):
        parser.add_argument("pem", type=Path, metavar="PEM")
        parser.add_argument("--project", required=True, metavar="SLUG")
        parser.add_argument(
            "--by",
            required=True,
            metavar="USERNAME",
            help="a project admin who is also an approver",
        )
        parser.add_argument("--label", default="", help="whose key this is")

    def handle(self, *args, pem: Path, project: str, by: str, label: str, **options):
        target, actor = project_or_error(project), user_or_error(by)
        try:
            text = pem.read_text(encoding="utf-8")
            key = trusted_key_register(actor=actor, project=target, pem=text, label=label)
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"{pem}: {error}") from None
        except KeyRefused as error:
            raise CommandError(f"{pem}: {error}") from None
        self.stdout.write(f"project {target.slug} now trusts key {key.key_id} ({by})")
