"""What tests/judging modules share: an emptied cache around each test that asks for it
(`_fresh_cache`), and `world`: the small calibration project (helpers.small_project) with a
member of every role and an outsider, imported once per module (each test's writes roll back).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.cache import cache

from judging.services.dashboard import dashboard_refresh, latest_snapshot
from reviews.models import Item, Role
from tests.factories import ProjectFactory, member
from tests.helpers import per_test_copy
from tests.judging.helpers import small_project


@pytest.fixture
def _fresh_cache():
    """The pending-recompute flags live in the (file) cache, which outlives a test's rollback."""
    cache.clear()
    yield
    cache.clear()


@dataclass
class World:
    project: object
    item: object
    users: dict  # role (or "outsider") -> user

    def disagreement(self) -> dict:
        """A held-out disagreement of the latest snapshot (computed if there is none)."""
        snapshot = latest_snapshot(self.project) or dashboard_refresh(project=self.project)
        payload = snapshot.payload
        return payload["criteria"][0]["disagreements"][0]


def _build_world(folder: Path) -> World:
    project = small_project(ProjectFactory(), folder)
    users = {role: member(project, role) for role in Role.values}
    users["outsider"] = member(ProjectFactory(), *Role.values)
    return World(project=project, item=Item.objects.filter(project=project).first(), users=users)


@pytest.fixture(scope="module")
def _world(module_db, tmp_path_factory):
    return module_db.build(_build_world, tmp_path_factory.mktemp("small-project"))


# The small project, imported once for each module that asks for it.
world = per_test_copy("_world")
