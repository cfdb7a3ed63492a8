from django.core.management.base import BaseCommand

from evalsite.management.lookups import refusals
from judging.services.runs.prices import PriceError, price_add


class Command(BaseCommand):
    help = (
        "Add a model's price, in force from now on (USD per million tokens). Prices are "
        "append-only: calls made before keep the price they were made at."
    )

    def add_arguments(self, parser):
        parser.add_argument("--provider", required=True, metavar="P")
        parser.add_argument("--model", required=True, metavar="M")
        parser.add_argument("--input-usd-per-mtok", required=True, metavar="X")
        parser.add_argument("--output-usd-per-mtok", required=True, metavar="Y")

    def handle(self, *, provider, model, input_usd_per_mtok, output_usd_per_mtok, **_):
        with refusals(PriceError):
            price = price_add(
                provider=provider,
                model=model,
                input_per_million=input_usd_per_mtok,
                output_per_million=output_usd_per_mtok,
            )
        self.stdout.write(
            f"{price.provider}/{price.model}: ${price.input_per_million} in, "
            f"${price.output_per_million} out per million tokens, from "
            f"{price.effective_from:%Y-%m-%d %H:%M:%S} UTC"
        )
