from judging.models import Panel
from judging.services.panels import PanelError, panel_decide
from judging.services.send_to_humans import SendError
from judging.services.splits import SPLIT_CHOICES, SplitError
from reviews.management.lookups import ProjectCommand, named_or_error


class Command(ProjectCommand):
    help = (
        "A panel votes (model-balanced; its rule and judges are set in the admin); ties, and "
        "dissent if the panel says so, are sent to human review."
    )
    refused = (PanelError, SendError, SplitError)

    def add_arguments(self, parser):
        parser.add_argument("--panel", required=True, metavar="NAME")
        parser.add_argument("--split", choices=SPLIT_CHOICES, default="all")

    def handle_project(self, project, *, panel, split, **_):
        found = named_or_error(Panel, project, panel, "panel")
        result = panel_decide(panel=found, split=split)
        self.stdout.write(
            f"{found.name} ({found.rule}): {len(result.decided)} decided, "
            f"{len(result.ties)} undecided, {len(result.dissent)} with dissent; "
            f"{result.sent} question(s) sent to human review"
        )
