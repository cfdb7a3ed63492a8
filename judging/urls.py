from django.urls import path, register_converter

from judging.views import (
    dashboard,
    disagreements,
    exports,
    generate,
    item,
    judges,
    lists,
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


register_converter(_choice("md", "json"), "report_format")
register_converter(_choice("svg", "png", "csv"), "chart_format")
register_converter(_choice("confusion", "reliability"), "chart_kind")

urlpatterns = [
    path("p/<slug:slug>/judges/", judges.judge_list, name="judge_list"),
    path("p/<slug:slug>/generate/", generate.generate, name="generate"),
    path("p/<slug:slug>/judges/save/", judges.judge_save, name="judge_save"),
    path("p/<slug:slug>/judges/<slug:name>/", judges.judge_page, name="judge_page"),
    path("p/<slug:slug>/judges/<slug:name>/run/", judges.run_start, name="run_start"),
    path("p/<slug:slug>/runs/<int:pk>/", judges.run_status, name="run_status"),
    path("p/<slug:slug>/runs/<int:pk>/cancel/", judges.run_stop, name="run_stop"),
    path("p/<slug:slug>/runs/<int:pk>/resume/", judges.run_continue, name="run_continue"),
    path("p/<slug:slug>/scores/", scores.score_list, name="score_list"),
    path("p/<slug:slug>/scores/upload/", scores.score_upload, name="score_upload"),
    path("p/<slug:slug>/scores/<int:pk>/", scores.score_run, name="score_run"),
    path("p/<slug:slug>/baselines/run/", scores.baseline_start, name="baseline_start"),
    path("dashboards/", lists.dashboards, name="dashboards"),
    path("p/<slug:slug>/dashboard/", dashboard.project_dashboard, name="project_dashboard"),
    path("p/<slug:slug>/dashboard/recompute/", dashboard.recompute, name="dashboard_recompute"),
    path("p/<slug:slug>/dashboard/split/", setup.draw_split, name="dashboard_split"),
    path("p/<slug:slug>/dashboard/send/", setup.send_items_to_humans, name="dashboard_send"),
    path(
        "p/<slug:slug>/dashboard/criteria/<path:name>/",
        dashboard.criterion_page,
        name="dashboard_criterion",
    ),
    path(
        "p/<slug:slug>/dashboard/disagreements/",
        disagreements.disagreement_list,
        name="dashboard_disagreements",
    ),
    path(
        "p/<slug:slug>/dashboard/items/<int:item_pk>/", item.dashboard_item, name="dashboard_item"
    ),
    path(
        "p/<slug:slug>/dashboard/disagreements/<int:item_pk>/tag/",
        disagreements.disagreement_tag,
        name="dashboard_tag",
    ),
    path(
        "p/<slug:slug>/dashboard/failures/",
        disagreements.failure_analysis,
        name="dashboard_failures",
    ),
    path(
        "p/<slug:slug>/dashboard/report.<report_format:fmt>",
        exports.dashboard_report,
        name="dashboard_report",
    ),
    path(
        "p/<slug:slug>/dashboard/charts/<chart_kind:kind>/<path:name>.<chart_format:fmt>",
        exports.dashboard_chart,
        name="dashboard_chart",
    ),
]
