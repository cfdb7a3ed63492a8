from evalsite.management.lookups import ProjectCommand
from judging.models import PanelRule
from judging.services.calibration.panels import PanelError, panel_configure


class Command(ProjectCommand):
    help = (
        "Make a panel of pinned judge versions: each --member is NAME@VERSION (or provider/model "
        "for imported verdicts). A judge's later version is not a member unless named; a panel's "
        "members never change (make a new panel)."
    )
    refused = (PanelError,)

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, metavar="NAME")
        parser.add_argument(
            "--member", required=True, action="append", metavar="NAME@VERSION", dest="members"
        )
        parser.add_argument("--rule", choices=PanelRule.values, default=PanelRule.MAJORITY)
        parser.add_argument("--send-dissent", action="store_true")

    def handle_project(self, project, *, name, members, rule, send_dissent, **_):
        panel = panel_configure(
            project=project, name=name, rule=rule, members=members, send_dissent=send_dissent
        )
        pinned = ", ".join(str(m) for m in panel.members.select_related("judge", "version__config"))
        self.stdout.write(f"panel {panel.name}: {panel.rule} of {pinned}")
