from django.urls import path

from reviews.views import (
    assignments,
    batch_approval,
    evidence,
    exports,
    gold,
    imports,
    items,
    members,
    projects,
    queue,
    review,
    tokens,
)

urlpatterns = [
    path("projects/", projects.project_list, name="project_list"),
    path("projects/new/", projects.project_new, name="project_new"),
    path("p/<slug:slug>/", projects.project_home, name="project_home"),
    path("p/<slug:slug>/raters/", projects.rater_quality_page, name="rater_quality"),
    path("p/<slug:slug>/raters/alert/", gold.rater_quality_settings, name="rater_quality_settings"),
    path("p/<slug:slug>/instructions/", projects.project_instructions, name="project_instructions"),
    path("p/<slug:slug>/settings/", projects.project_settings, name="project_settings"),
    path("p/<slug:slug>/members/", members.members, name="members"),
    path(
        "p/<slug:slug>/members/<int:user_pk>/remove/", members.member_remove, name="member_remove"
    ),
    path("p/<slug:slug>/items/", items.item_list, name="item_list"),
    path("p/<slug:slug>/items/<int:item_pk>/", items.item_detail, name="item_detail"),
    path(
        "p/<slug:slug>/items/<int:item_pk>/questions/<int:question_pk>/adjudicate/",
        items.question_adjudicate,
        name="question_adjudicate",
    ),
    path("p/<slug:slug>/items/<int:item_pk>/gold/", gold.item_gold, name="item_gold"),
    path("p/<slug:slug>/items/<int:item_pk>/approve/", items.item_approve, name="item_approve"),
    path("p/<slug:slug>/items/<int:item_pk>/timeline/", items.item_timeline, name="item_timeline"),
    path(
        "p/<slug:slug>/adjudication/",
        items.work_queue,
        {"kind": "adjudication"},
        name="adjudication_queue",
    ),
    path("p/<slug:slug>/approvals/", items.work_queue, {"kind": "approval"}, name="approval_queue"),
    path("p/<slug:slug>/approvals/batch/", batch_approval.approval_batch, name="approval_batch"),
    path("p/<slug:slug>/assignments/", assignments.assignments, name="assignments"),
    path("p/<slug:slug>/imports/", imports.import_upload, name="import_upload"),
    path("p/<slug:slug>/export/", exports.project_export, name="project_export"),
    path("p/<slug:slug>/imports/<int:job_pk>/", imports.import_job, name="import_job"),
    path(
        "p/<slug:slug>/imports/<int:job_pk>/retry/",
        imports.import_job_retry_view,
        name="import_job_retry",
    ),
    path("queue/", queue.my_queue, name="my_queue"),
    path("p/<slug:slug>/review/next/", queue.review_next, name="review_next"),
    path("p/<slug:slug>/items/<int:item_pk>/review/", review.review_item, name="review_item"),
    path(
        "p/<slug:slug>/items/<int:item_pk>/questions/<int:question_pk>/answer/",
        review.answer_save,
        name="answer_save",
    ),
    path("p/<slug:slug>/items/<int:item_pk>/submit/", review.item_submit, name="review_submit"),
    path("p/<slug:slug>/items/<int:item_pk>/skip/", review.item_skip, name="review_skip"),
    path(
        "p/<slug:slug>/documents/<str:sha256>/pages/<int:page>.img",
        evidence.page_image,
        name="evidence_page",
    ),
    path(
        "p/<slug:slug>/documents/<str:sha256>/pages/<int:page>/words.json",
        evidence.page_words,
        name="evidence_words",
    ),
    path(
        "p/<slug:slug>/documents/<str:sha256>/pages/<int:page>/locate.json",
        evidence.page_locate,
        name="evidence_locate",
    ),
    path("account/tokens/", tokens.api_tokens, name="api_tokens"),
    path("account/tokens/<int:pk>/revoke/", tokens.api_token_revoke, name="api_token_revoke"),
]
