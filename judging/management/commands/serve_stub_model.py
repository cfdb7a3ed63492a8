from django.core.management.base import BaseCommand

from judging.stub_model import make_server


class Command(BaseCommand):
    help = (
        "Serve the STUB model (deterministic, not a model) as an OpenAI-compatible endpoint, "
        "for the demo and benchmarks: point a judge at http://HOST:PORT/v1."
    )

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8001)
        parser.add_argument("--delay", type=float, default=0.0, help="seconds per reply")

    def handle(self, *args, host, port, delay, **options):
        server = make_server(host, port, delay)
        address = server.server_address
        self.stdout.write(f"stub model (not a model) at http://{address[0]}:{address[1]}/v1")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
