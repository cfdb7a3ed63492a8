from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from reviews.models import Project
from reviews.services.approved_imports import KeyRefused, trusted_key_revoke


class Command(BaseCommand):
    help = (
        "Stop trusting a key registered with trust_key (leaked, or its owner left): approved "
        "files it signs are refused from now on. Final, and recorded with who and why."
    )

    def add_arguments(self, parser):
        parser.add_argument("key_id", metavar="KEY_ID")
        parser.add_argument("--project", required=True, metavar="SLUG")
        parser.add_argument("--by", required=True, metavar="USERNAME", help="a project admin")
        parser.add_argument("--reason", required=True)

    def handle(self, *args, key_id: str, project: str, by: str, reason: str, **options):
        target = Project.objects.filter(slug=project).first()
        if target is None:
            raise CommandError(f"No project {project!r}.")
        actor = get_user_model().objects.filter(username=by).first()
        if actor is None:
            raise CommandError(f"No user {by!r}.")
        try:
            trusted_key_revoke(actor=actor, project=target, key_id=key_id, reason=reason)
        except KeyRefused as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"project {target.slug} no longer trusts key {key_id} ({by})")
