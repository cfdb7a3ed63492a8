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
        from judging.reports import rows

        # TextFlow, Label Studio, the judging record kinds and the `criterion` question source and definer
        # join reviews' import registry (reviews/services/imports/registry.py).
        from judging.services.imports import label_studio, records  # noqa: F401
        from reviews.signals import project_data_changed

        # Calls, verdicts and labels join reviews' row exports.
        rows.register()
        project_data_changed.connect(_labels_changed, dispatch_uid="judging-dashboard-recompute")
        _item_list_register()
        _jobs_register()
        _project_tabs_add()


def _project_tabs_add():
    """Judging's pages on the project home (reviews' templates name them by key only)."""
    from reviews.navigation import ProjectTab, project_tab_add

    project_tab_add(ProjectTab("dashboard", "Dashboard", "project_dashboard", "overseer"))
    project_tab_add(ProjectTab("scores", "Scores", "score_list", "overseer"))
    project_tab_add(ProjectTab("questions", "Questions", "questions", "admin"))


def _item_list_register():
    """Judging's part of reviews' item list: filter by split, send the chosen items to people."""
    from judging.forms import SendChosenForm
    from judging.models import Split
    from judging.selectors import criterion_names_statement, split_condition
    from judging.services.calibration.send_to_humans import items_send_chosen
    from reviews import item_hooks

    item_hooks.filter_register(
        item_hooks.ListFilter(
            "split", "Split", lambda project: list(Split.choices), split_condition
        )
    )
    item_hooks.action_register(
        item_hooks.BulkAction(
            "send_to_humans",
            "Send to humans",
            SendChosenForm,
            items_send_chosen,
            help="ask people for a criterion's label",
            run_in_steps=items_send_chosen,  # with `progress`: the dashboard job's steps
            reads=lambda project: [criterion_names_statement(project)],  # the form's criteria
        )  # fmt: skip
    )


def _jobs_register():
    """Judging's long operations, run by reviews' background jobs."""
    from judging.forms import DashboardRecomputeForm, SendToHumansForm, SplitDrawForm
    from judging.services import dashboard_recompute
    from judging.services.calibration.send_to_humans import SendError, items_send_said
    from judging.services.calibration.splits import SplitError, split_draw_said
    from reviews.services.jobs.registry import JobKind, job_kind_add

    # One transaction, not in steps: a draw deletes the old split and writes the new one under
    # the project's lock, after checking no held-out item is labelled yet. Half of it committed
    # would be seen: the dashboard and send to humans would read a split of some items, and the
    # next recompute would draw the rest as late items (marked late, by the late-item rule),
    # not as the draw's own (on SQLite the draw holds the write lock throughout).
    job_kind_add(JobKind("split_draw", "Draw the split", SplitDrawForm, split_draw_said,
                         refusals=(SplitError,)))  # fmt: skip
    job_kind_add(JobKind("send_to_humans", "Send to humans", SendToHumansForm, items_send_said,
                         refusals=(SendError, SplitError), progress=True,
                         in_steps=True))  # fmt: skip
    # Overseers see the figures, admins recompute them; the automatic one (no starter) runs as
    # the operator's console. In steps: see dashboard_recompute's docstring.
    job_kind_add(JobKind(dashboard_recompute.KIND, "Recompute the dashboard",
                         DashboardRecomputeForm, dashboard_recompute.dashboard_recompute_said,
                         progress=True, in_steps=True))  # fmt: skip


def _labels_changed(sender, *, project, **kwargs):
    """New labels or verdicts: recompute the project's dashboard (a background job)."""
    from judging.services.dashboard_recompute import recompute_after_change

    recompute_after_change(project)
