from evalsite.management.lookups import ProjectCommand, named_or_error
from judging.models import Panel
from judging.services.calibration.panels import PanelError, panel_decide
from judging.services.calibration.send_to_humans import SendError
from judging.services.calibration.splits import SPLIT_CHOICES, SplitError
from reviews.models import Item

SHOWN = 10  # items named per member that did not judge them


class Command(ProjectCommand):
    help = (
        "A panel votes with its pinned members (model-balanced; set with panel_config or in the "
        "admin); ties, and dissent if the panel says so, are sent to human review. Members "
        "that did not judge an item are named."
    )
    refused = (PanelError, SendError, SplitError)

    def add_arguments(self, parser):
        parser.add_argument("--panel", required=True, metavar="NAME")
        parser.add_argument("--split", choices=SPLIT_CHOICES, default="all")

    def handle_project(self, project, *, panel, split, **_):
        found = named_or_error(Panel, project, panel, "panel")
        result = panel_decide(panel=found, split=split)
        self.stdout.write(
            f"{found.name} ({found.rule} of {', '.join(result.missing)}): "
            f"{len(result.decided)} decided, {len(result.ties)} undecided, "
            f"{len(result.dissent)} with dissent; {result.sent} question(s) sent to human review"
        )
        for ref, items in result.missing.items():
            if items:
                names = Item.objects.filter(pk__in=items[:SHOWN]).order_by("pk")
                shown = ", ".join(names.values_list("external_id", flat=True))
                more = ", …" if len(items) > SHOWN else ""
                self.stdout.write(f"  {ref} did not judge {len(items)} item(s): {shown}{more}")
