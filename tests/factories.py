"""factory_boy factories for the models tests build most often."""

import factory
from django.contrib.auth import get_user_model

from reviews.models import Item, Membership, Project, Role

PASSWORD = "correct-horse-battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    # Hashed before the INSERT: one write per user, not an INSERT and then an UPDATE.
    password = factory.django.Password(PASSWORD)


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    slug = factory.Sequence(lambda n: f"project-{n}")
    name = factory.LazyAttribute(lambda p: p.slug.replace("-", " ").title())


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.RATER


class ItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Item

    project = factory.SubFactory(ProjectFactory)
    external_id = factory.Sequence(lambda n: f"item-{n:05d}")


def member(project, *roles, username=None):
    """A user holding `roles` in `project`."""
    user = UserFactory(**({"username": username} if username else {}))
    for role in roles:
        MembershipFactory(project=project, user=user, role=role)
    return user
