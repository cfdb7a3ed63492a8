from django.core.management.base import BaseCommand

from reviews.services.approval import signing


class Command(BaseCommand):
    help = "Print this site's approval public key (PEM), for verify_approval --public-key."

    def handle(self, *args, **options):
        self.stdout.write(signing.public_key_pem().decode("ascii"), ending="")
