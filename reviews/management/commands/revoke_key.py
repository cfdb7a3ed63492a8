from evalsite.management.lookups import ProjectCommand, user_or_error
from reviews.services.imports.approved import KeyRefused, trusted_key_revoke


class Command(ProjectCommand):
    help = (
        "Stop trusting a key registered with trust_key (leaked, or its owner left): approved "
        "files it signs are refused from now on. Final, and recorded with who and why."
    )
    refused = (KeyRefused,)

    def add_arguments(self, parser):
        parser.add_argument("key_id", metavar="KEY_ID")
        parser.add_argument("--by", required=True, metavar="USERNAME", help="a project admin")
        parser.add_argument("--reason", required=True)

    def handle_project(self, project, *, key_id: str, by: str, reason: str, **_):
        actor = user_or_error(by)
        trusted_key_revoke(actor=actor, project=project, key_id=key_id, reason=reason)
        self.stdout.write(f"project {project.slug} no longer trusts key {key_id} ({by})")
