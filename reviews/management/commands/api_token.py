from django.core.management.base import BaseCommand, CommandError

from evalsite.management.lookups import form_or_error, user_or_error
from reviews.forms import TokenForm
from reviews.services.projects.tokens import DEFAULT_LIFETIME, LIFETIMES, token_create


class Command(BaseCommand):
    help = (
        "Create an API token for a user and print it once, alone on the last line (as the "
        "tokens page shows it once). The audit log records it like a token made on the page."
    )

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, metavar="USERNAME")
        parser.add_argument("--name", required=True, metavar="NAME", help="to recognise it by")
        choices = ", ".join("never" if d is None else str(d) for d in LIFETIMES)
        parser.add_argument(
            "--days",
            default=str(DEFAULT_LIFETIME),
            metavar="DAYS",
            help=f"how long it works: {choices} (default {DEFAULT_LIFETIME})",
        )

    def handle(self, *args, user, name, days, **options):
        owner = user_or_error(user)
        if not owner.is_active:
            raise CommandError(f"User {user!r} is inactive: a token of theirs would not work.")
        # The page's own form: the same names and lifetimes, no looser.
        data = form_or_error(TokenForm({"name": name, "lifetime": "" if days == "never" else days}))
        token, secret = token_create(
            actor=None, user=owner, name=data["name"], days=data["lifetime"]
        )
        expires = token.expires_at.date().isoformat() if token.expires_at else "never"
        self.stdout.write(f"Token {token.name!r} for {owner.get_username()} (expires: {expires}).")
        self.stdout.write(secret)
