"""The choices reviews' templates compare against (`q.status != QuestionStatus.OPEN`), so a
template names an enum member, never a bare status string a rename would silently miss."""

from reviews.models import Decision, ImportJob, ItemStatus, QuestionStatus


def choices(request) -> dict:
    return {
        "Decision": Decision,
        "ItemStatus": ItemStatus,
        "QuestionStatus": QuestionStatus,
        "JobStatus": ImportJob.Status,  # background jobs share it (reviews.models.Job.Status)
    }
