"""The tour's rate and approve steps for one demo item, through the services (README test).

Run in a checkout after `make run`: `manage.py shell < this file`. rita and raj give the same
answer to every question of statement-0001, then april approves it.
"""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from reviews.models import Assignment, AssignmentStatus, Decision, Item
from reviews.services.approval.approve import approval_record
from reviews.services.rating.answers import AnswerInput, answer_record, assignment_submit

users = {
    u.username: u for u in get_user_model().objects.filter(username__in=["rita", "raj", "april"])
}
item = Item.objects.get(project__slug="demo", external_id="statement-0001")
now = timezone.now()
for name in ("rita", "raj"):
    assignment = Assignment.objects.create(
        item=item,
        rater=users[name],
        status=AssignmentStatus.ACTIVE,
        opened_at=now,
        lease_expires_at=now + timedelta(hours=1),
    )
    for question in item.questions.order_by("pk"):
        answer_record(
            actor=users[name],
            assignment=assignment,
            question=question,
            given=AnswerInput(Decision.SET, "agreed value"),
            expected_seq=0,
        )
    assignment_submit(actor=users[name], assignment=assignment)
approval_record(actor=users["april"], item=item, password="april-demo-2026", confirmed=True)
print("approved", item)
