from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connections, transaction

from evalsite.db_roles import app_role_grant


class Command(BaseCommand):
    help = (
        "PostgreSQL: grant the site's role (DATABASE_URL's user) SELECT, INSERT, UPDATE and "
        "DELETE on the tables, now and for tables made later, connected as their owner "
        "(MIGRATE_DATABASE_URL); make serve runs it after migrate."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--role",
            default=settings.DATABASES["default"].get("USER", ""),
            help="the role to grant (default: DATABASE_URL's user)",
        )
        parser.add_argument(
            "--database",
            default="owner" if "owner" in settings.DATABASES else "default",
            help="the connection that owns the tables (default: MIGRATE_DATABASE_URL's)",
        )

    def handle(self, *args, role, database, **options):
        owner = connections[database]
        if owner.vendor != "postgresql":
            raise CommandError("grant_app_role is for PostgreSQL (SQLite has no roles)")
        if not role:
            raise CommandError("--role: DATABASE_URL names no user")
        try:
            with transaction.atomic(using=database):
                statements = app_role_grant(owner, role)
        except ValueError as refused:
            raise CommandError(str(refused)) from None
        for sql in statements:
            self.stdout.write(sql)
        self.stdout.write(f"role {role!r} may now use the site's tables, and owns none of them")
