from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from reviews.reports.verification import verify_path
from reviews.services.approval import signing


class Command(BaseCommand):
    help = (
        "Verify every approval in exported .json/.jsonl/.csv files (a file or a folder); "
        "non-zero exit on any failure."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument(
            "--public-key",
            type=Path,
            metavar="PEM",
            help="the signer's Ed25519 public key (default: this site's key)",
        )
        parser.add_argument(
            "--allow-v1",
            action="store_true",
            help="accept format-1 approvals (rows only, not bound to the case) as OK",
        )

    def handle(self, *args, path: Path, public_key: Path | None, allow_v1: bool, **options):
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
        old = sum(v.v1 for v in verdicts)
        if old and not allow_v1:
            raise CommandError(
                f"{old} of {len(verdicts)} approval(s) are format 1 (rows only, not bound to "
                "the case); pass --allow-v1 to accept them."
            )
        self.stdout.write(f"all {len(verdicts)} approval(s) verify")
