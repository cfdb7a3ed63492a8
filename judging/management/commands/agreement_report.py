from evalsite.management.lookups import ReportCommand, user_or_error
from judging.reports.agreement.cuts import CollapseError
from judging.reports.agreement.markdown import render_markdown
from judging.reports.agreement.report import AgreementReportError, agreement_report
from judging.services.calibration.splits import SPLIT_CHOICES, SplitError


class Command(ReportCommand):
    help = "Judge–human and human–human agreement per criterion (held-out items by default)."
    refused = (SplitError, AgreementReportError, CollapseError)

    def add_arguments(self, parser):
        parser.add_argument("--criterion", metavar="NAME", help="only this criterion")
        parser.add_argument(
            "--split",
            choices=SPLIT_CHOICES,
            help="default: held_out (all, with a note, while no split is drawn)",
        )
        parser.add_argument("--user", metavar="USERNAME", help="who reads the figures (logged)")
        parser.add_argument(
            "--collapse-at",
            metavar="LABEL",
            help="ordinal criteria: report the criterion as two groups, the labels before LABEL "
            "against LABEL and after (needs --criterion)",
        )

    def handle_project(self, project, *, criterion, split, format, seed, user, collapse_at, **_):
        report = agreement_report(
            actor=user_or_error(user),
            project=project,
            split=split,
            criterion=criterion,
            seed=seed,
            collapse_at=collapse_at,
        )
        self.write_report(report, format=format, markdown=render_markdown)
