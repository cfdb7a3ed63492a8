"""The demo project: users for every role and items whose evidence is generated locally.

Idempotent: running it again leaves one copy of everything and resets the demo passwords to the
printed ones, so the logins `make run` prints always work.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from reviews.demo.files import write_demo_reviews
from reviews.models import Project, Role
from reviews.services.imports.pipeline import file_import
from reviews.services.projects.members import membership_add, project_create

DEMO_SLUG = "demo"
DEMO_INSTRUCTIONS = """\
Settle each field **as printed on the evidence**, not as a model read it.

- Choose the candidate that matches the page; if none does, type the value exactly as printed.
- *Omit* a field the document does not contain; *Unclear* when the page cannot decide.
- Amounts keep the document's thousands separators and decimals (`12,480.55`).
"""


@dataclass(frozen=True)
class DemoUser:
    username: str
    password: str
    full_name: str
    roles: tuple[str, ...]
    staff: bool = False  # never a superuser: staff see only their own projects in /admin/

    @property
    def described(self) -> str:
        """The roles as `make run` prints them and README's logins table says."""
        roles = ["project admin" if role == Role.ADMIN else str(role) for role in self.roles]
        return ", ".join(roles + (["site staff (not a superuser)"] if self.staff else []))


DEMO_USERS = (
    DemoUser("rita", "rita-demo-2026", "Rita Rater", (Role.RATER,)),
    DemoUser("raj", "raj-demo-2026", "Raj Rater", (Role.RATER,)),
    DemoUser("ada", "ada-demo-2026", "Ada Adjudicator", (Role.ADJUDICATOR,)),
    DemoUser("april", "april-demo-2026", "April Approver", (Role.APPROVER,)),
    DemoUser("alex", "alex-demo-2026", "Alex Admin", (Role.ADMIN,), staff=True),
)


def _demo_user(spec: DemoUser):
    first, _, last = spec.full_name.partition(" ")
    user, _ = get_user_model().objects.update_or_create(
        username=spec.username,
        defaults={
            "first_name": first,
            "last_name": last,
            "email": f"{spec.username}@demo.evalsite.local",
            "is_staff": spec.staff,
            "is_superuser": False,  # a demo with a superuser before this one loses it
        },
    )
    user.set_password(spec.password)
    user.save(update_fields=["password"])
    return user


def demo_project(users: dict, *, slug: str, name: str) -> Project:
    """A demo project (created, or found again) administered by Alex, with every demo user
    in their roles."""
    admin = users["alex"]
    project = project_create(actor=admin, slug=slug, name=name).project
    for spec in DEMO_USERS:
        for role in spec.roles:
            membership_add(actor=admin, project=project, user=users[spec.username], role=role)
    return project


@transaction.atomic
def demo_load():
    """Create (or refresh) the demo users and review project; returns it and the users."""
    users = {spec.username: _demo_user(spec) for spec in DEMO_USERS}
    project = demo_project(users, slug=DEMO_SLUG, name="Statements & receipts (demo)")
    if not project.description:
        project.description = (
            "Bank statements and receipts read by several models; settle the fields they "
            "disagreed on, then approve the ground truth."
        )
        project.save(update_fields=["description"])
    if not project.instructions:
        project.instructions = DEMO_INSTRUCTIONS
        project.save(update_fields=["instructions"])
    with tempfile.TemporaryDirectory(prefix="evalsite-demo-") as folder:
        reviews = write_demo_reviews(Path(folder))
        file_import(actor=users["alex"], project=project, path=reviews, format="review")
    return project, users
