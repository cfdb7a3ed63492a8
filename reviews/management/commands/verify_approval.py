from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from reviews.services import signing
from reviews.services.verification import verify_path


class Command(BaseCommand):
    help = "Verify every approval in an exported file (or folder); non-zero exit on any failure."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument(
            "--public-key",
            type=Path,
            metavar="PEM",
            help="the signer's Ed25519 public key (default: this site's key)",
        )

    def handle(self, *args, path: Path, public_key: Path | None, **options):
        if not path.exists():
            raise CommandError(f"{path}: no such file or folder.")
        if public_key is not None:
            try:
                key = signing.load_public_key(public_key.read_bytes())
            except (OSError, ValueError) as error:
                raise CommandError(f"{public_key}: not an Ed25519 public key ({error}).") from None
        else:
            key = signing.load_or_create_private_key().public_key()
        verdicts = verify_path(path, key)
        if not verdicts:
            raise CommandError(f"{path}: no exported approvals found.")
        for verdict in verdicts:
            self.stdout.write(verdict.line())
        failures = sum(not v.ok for v in verdicts)
        if failures:
            raise CommandError(f"{failures} of {len(verdicts)} approval(s) do not verify.")
        self.stdout.write(f"all {len(verdicts)} approval(s) verify")
