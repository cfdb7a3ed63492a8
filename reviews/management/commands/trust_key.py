from pathlib import Path

from django.core.management.base import CommandError

from evalsite.management.lookups import ProjectCommand, user_or_error
from reviews.services.imports.approved import KeyRefused, trusted_key_register


class Command(ProjectCommand):
    help = (
        "Trust another signer's Ed25519 public key for a project's approved-file imports "
        "(recorded with who registered it, and when)."
    )

    def add_arguments(self, parser):
        parser.add_argument("pem", type=Path, metavar="PEM")
        parser.add_argument(
            "--by",
            required=True,
            metavar="USERNAME",
            help="a project admin who is also an approver",
        )
        parser.add_argument("--label", default="", help="whose key this is")

    def handle_project(self, project, *, pem: Path, by: str, label: str, **_):
        actor = user_or_error(by)
        try:
            text = pem.read_text(encoding="utf-8")
            key = trusted_key_register(actor=actor, project=project, pem=text, label=label)
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"{pem}: {error}") from None
        except KeyRefused as error:
            raise CommandError(f"{pem}: {error}") from None
        self.stdout.write(f"project {project.slug} now trusts key {key.key_id} ({by})")
