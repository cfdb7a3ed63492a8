from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"
    verbose_name = "Judging"
    # Append-only: database triggers refuse UPDATE and DELETE (evalsite/history_triggers.py).
    history_tables = (
        "judging_humanlabel",
        "judging_heldoutaccess",
        "judging_dashboardsnapshot",
        "judging_failuretag",
        "judging_judgeversion",
        "judging_scorerun",
        "judging_modelprice",
        "judging_labelrequest",
    )

    def ready(self):
        # TextFlow and the judging record kinds register with reviews' import dispatcher.
        from judging.reports import rows
        from judging.services.imports import records  # noqa: F401
        from reviews.signals import project_data_changed

        # Calls, verdicts and labels join reviews' row exports.
        rows.register()
        project_data_changed.connect(_labels_changed, dispatch_uid="judging-dashboard-recompute")


def _labels_changed(sender, *, project, **kwargs):
    """New labels or verdicts: recompute the project's dashboard in the background."""
    from judging.models import Criterion
    from judging.tasks import request_recompute

    if Criterion.objects.filter(project=project).exists():
        request_recompute(project)
