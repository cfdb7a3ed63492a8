from django.urls import include, path, register_converter

from evalsite import converters
from judging.views import (
    compare,
    dashboard,
    disagreements,
    estimates,
    exports,
    generate,
    held_out,
    item,
    judges,
    lists,
    measures,
    questions,
    scores,
    setup,
)


def _choice(*words):
    """A path converter limited to a few words (report and chart formats)."""
    return type(
        "Choice",
        (),
        {
            "regex": "|".join(words),
            "to_python": lambda self, value: value,
            "to_url": lambda self, value: value,
        },
    )


converters.register()  # <id:...>: a row id, at most 18 digits (a longer one is 404)
register_converter(_choice("md", "json"), "report_format")
register_converter(_choice("svg", "png", "csv"), "chart_format")
register_converter(_choice("confusion", "reliability"), "chart_kind")

# Under p/<slug>/dashboard/: the figures, their pages and downloads, and the setup posts.
dashboard_patterns = [
    path("", dashboard.project_dashboard, name="project_dashboard"),
    path("recompute/", dashboard.recompute, name="dashboard_recompute"),
    path("held-out/show/", held_out.held_out_show, name="held_out_show"),
    path("split/", setup.draw_split, name="dashboard_split"),
    path("send/", setup.send_items_to_humans, name="dashboard_send"),
    path("criteria/<path:name>/", dashboard.criterion_page, name="dashboard_criterion"),
    path("estimate/<path:name>/", estimates.estimate_page, name="dashboard_estimate"),
    path("items/<id:item_pk>/", item.dashboard_item, name="dashboard_item"),
    path("disagreements/", disagreements.disagreement_list, name="dashboard_disagreements"),
    path("disagreements/<id:item_pk>/tag/", disagreements.disagreement_tag, name="dashboard_tag"),
    path("failures/", disagreements.failure_analysis, name="dashboard_failures"),
    path("report.<report_format:fmt>", exports.dashboard_report, name="dashboard_report"),
    path(
        "charts/<chart_kind:kind>/<path:name>.<chart_format:fmt>",
        exports.dashboard_chart,
        name="dashboard_chart",
    ),
]

# Under p/<slug>/judges/: the judges, one judge's page, and starting a run of it.
judge_patterns = [
    path("", judges.judge_list, name="judge_list"),
    path("save/", judges.judge_save, name="judge_save"),
    path("<slug:name>/", judges.judge_page, name="judge_page"),
    path("<slug:name>/run/", judges.run_start, name="run_start"),
    path("<slug:name>/compare/", compare.judge_compare, name="judge_compare"),
]

# Under p/<slug>/runs/<pk>/: one run's progress, and stopping or resuming it.
run_patterns = [
    path("", judges.run_status, name="run_status"),
    path("cancel/", judges.run_stop, name="run_stop"),
    path("resume/", judges.run_continue, name="run_continue"),
]

# Under p/<slug>/scores/: scored prediction files.
score_patterns = [
    path("", scores.score_list, name="score_list"),
    path("upload/", scores.score_upload, name="score_upload"),
    path("<id:pk>/", scores.score_run, name="score_run"),
    path("<id:pk>/case/", scores.score_case, name="score_case"),
    path("<id:pk>/claims/send/", scores.score_claims_send, name="score_claims_send"),
]

# Under p/<slug>/: judges and their runs, ground-truth generation, scores, the dashboard.
project_patterns = [
    path("questions/", questions.questions, name="questions"),
    path("judges/", include(judge_patterns)),
    path("runs/<id:pk>/", include(run_patterns)),
    path("generate/", generate.generate, name="generate"),
    path("scores/", include(score_patterns)),
    path("baselines/run/", scores.baseline_start, name="baseline_start"),
    path("text-metrics/", measures.text_metrics_page, name="text_metrics"),
    path("pass-at-k/", measures.pass_at_k_page, name="pass_at_k"),
    path("dashboard/", include(dashboard_patterns)),
]

urlpatterns = [
    path("dashboards/", lists.dashboards, name="dashboards"),
    path("p/<slug:slug>/", include(project_patterns)),
]
