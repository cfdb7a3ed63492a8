from django.urls import include, path

from evalsite import converters
from reviews.views import (
    assignments,
    audit,
    batch_approval,
    docs,
    evidence,
    exports,
    gold,
    imports,
    item_list,
    items,
    jobs,
    members,
    projects,
    questions,
    queue,
    review,
    tokens,
    webhooks,
)

converters.register()  # <id:...>: a row id, at most 18 digits (a longer one is 404)

# Under p/<slug>/items/<item_pk>/: one item's pages and the posts its forms make.
item_patterns = [
    path("", items.item_detail, name="item_detail"),
    path("approve/", items.item_approve, name="item_approve"),
    path("timeline/", items.item_timeline, name="item_timeline"),
    path("gold/", gold.item_gold, name="item_gold"),
    path("review/", review.review_item, name="review_item"),
    path("submit/", review.item_submit, name="review_submit"),
    path("skip/", review.item_skip, name="review_skip"),
    path(
        "questions/<id:question_pk>/adjudicate/",
        items.question_adjudicate,
        name="question_adjudicate",
    ),
    path("questions/<id:question_pk>/answer/", review.answer_save, name="answer_save"),
]

# Under p/<slug>/documents/<sha256>/pages/: evidence pages, their words, a quote's boxes.
page_patterns = [
    path("<id:page>.img", evidence.page_image, name="evidence_page"),
    path("<id:page>/words.json", evidence.page_words, name="evidence_words"),
    path("<id:page>/locate.json", evidence.page_locate, name="evidence_locate"),
]

# Under p/<slug>/: everything inside one project.
project_patterns = [
    path("", projects.project_home, name="project_home"),
    path("raters/", projects.rater_quality_page, name="rater_quality"),
    path("raters/alert/", gold.rater_quality_settings, name="rater_quality_settings"),
    path("instructions/", projects.project_instructions, name="project_instructions"),
    path("settings/", projects.project_settings, name="project_settings"),
    path("members/", members.members, name="members"),
    path("webhooks/", webhooks.webhooks, name="webhooks"),
    path("webhooks/<id:hook_pk>/", webhooks.webhook_detail, name="webhook_detail"),
    path(
        "webhooks/<id:hook_pk>/disable/",
        webhooks.webhook_disable_view,
        name="webhook_disable",
    ),
    path("audit/", audit.project_audit, name="project_audit"),
    path("members/<id:user_pk>/remove/", members.member_remove, name="member_remove"),
    path("members/<id:user_pk>/unlock/", members.member_unlock, name="member_unlock"),
    path("items/", item_list.item_list, name="item_list"),
    path("items/bulk/", item_list.item_bulk, name="item_bulk"),
    path("items/<id:item_pk>/", include(item_patterns)),
    path("adjudication/", items.work_queue, {"kind": "adjudication"}, name="adjudication_queue"),
    path("approvals/", items.work_queue, {"kind": "approval"}, name="approval_queue"),
    path("approvals/batch/", batch_approval.approval_batch, name="approval_batch"),
    path("assignments/", assignments.assignments, name="assignments"),
    path("imports/", imports.import_upload, name="import_upload"),
    path("imports/<id:job_pk>/", imports.import_job, name="import_job"),
    path("imports/<id:job_pk>/retry/", imports.import_job_retry_view, name="import_job_retry"),
    path("jobs/<id:job_id>/", jobs.job_detail, name="job"),
    path("jobs/<id:job_id>/download/", jobs.job_download, name="job_download"),
    path("export/", exports.project_export, name="project_export"),
    path("rows/", exports.row_export, name="row_export"),
    path("review/next/", queue.review_next, name="review_next"),
    path("documents/<str:sha256>/pages/", include(page_patterns)),
]

urlpatterns = [
    path("projects/", projects.project_list, name="project_list"),
    path("projects/new/", projects.project_new, name="project_new"),
    path("questions/builder/", questions.question_builder, name="question_builder"),
    path("docs/<slug:name>/", docs.docs_page, name="docs_page"),
    path("queue/", queue.my_queue, name="my_queue"),
    path("account/tokens/", tokens.api_tokens, name="api_tokens"),
    path("account/tokens/<id:pk>/revoke/", tokens.api_token_revoke, name="api_token_revoke"),
    path("p/<slug:slug>/", include(project_patterns)),
]
