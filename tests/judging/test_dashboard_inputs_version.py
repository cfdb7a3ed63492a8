"""The dashboard's freshness check costs the same whatever the number of verdicts (issue #33),
and every kind of change that can alter the figures still makes the page say they are out of
date: the project's data version (reviews.services.projects.data) moves with each write of
the evidence, in the write's own transaction."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from judging.models import Verdict
from judging.services.calibration.splits import split_draw, split_extend
from judging.services.dashboard import dashboard_refresh, inputs_fingerprint, latest_snapshot
from judging.services.runs.baseline import baseline_run
from judging.services.runs.baselines import Baseline
from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute
from judging.stub_model import answer
from reviews.models import Item, Role
from reviews.services.projects.data import project_data_version
from tests.factories import member
from tests.judging.helpers import (
    human_record,
    item_record,
    small_project,
    verdict_record,
)
from tests.judging.run_helpers import judge, labelled_project
from tests.judging.test_dashboard_freshness import STALE, dashboard, import_records
from tests.judging.wire_server import Say, WireServer

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_fresh_cache")]

# Tables whose rows grow with the data: the check must read none of them.
GROWING = (
    "judging_verdict",
    "judging_humanlabel",
    "judging_itemsplit",
    "reviews_resolution",
    "reviews_itemrevision",
    "reviews_item",
)


def check_queries(project) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        inputs_fingerprint(project)
    return [q["sql"] for q in captured.captured_queries]


@pytest.fixture
def small(project, tmp_path):
    small_project(project, tmp_path)
    return project


def assert_stale_after(client, project, change) -> None:
    """`change()` makes the fresh page say its figures are out of date."""
    client.force_login(member(project, Role.ADMIN, username="watcher"))
    assert STALE not in dashboard(client, project)
    before = project_data_version(project)
    change()
    assert inputs_fingerprint(project) != latest_snapshot(project).fingerprint
    assert project_data_version(project) > before
    assert STALE in dashboard(client, project)


def test_the_check_reads_no_growing_table_and_as_many_queries_at_any_size(small, tmp_path):
    queries = check_queries(small)
    for sql in queries:
        for table in GROWING:
            assert f'"{table}"' not in sql, (table, sql)
    more = [item_record(f"m{i:03}") for i in range(40)]
    more += [verdict_record(f"m{i:03}", "pass") for i in range(40)]
    more += [human_record(f"m{i:03}", "ana", "fail") for i in range(40)]
    import_records(small, tmp_path, more)
    assert len(check_queries(small)) == len(queries)


def test_equal_inputs_give_equal_fingerprints(small):
    assert inputs_fingerprint(small) == latest_snapshot(small).fingerprint
    assert inputs_fingerprint(small) == inputs_fingerprint(small)


def test_a_new_verdict_is_a_change(client, small, tmp_path):
    assert_stale_after(
        client,
        small,
        lambda: import_records(small, tmp_path, [verdict_record("s01", "fail", sample=3)]),
    )


def test_a_new_human_label_is_a_change(client, small, tmp_path):
    assert_stale_after(
        client, small, lambda: import_records(small, tmp_path, [human_record("s01", "zoe", "fail")])
    )


def test_a_revised_item_is_a_change(client, small, tmp_path):
    def revise():
        import_records(small, tmp_path, [item_record("s01", output="another answer")])
        assert Item.objects.get(project=small, external_id="s01").revision == 2

    assert_stale_after(client, small, revise)


def test_an_import_that_changes_nothing_changes_no_figure_but_may_say_so(small, tmp_path):
    """Re-importing the same rows still moves the version: at worst one recompute too many,
    never figures called up to date when they are not."""
    before = project_data_version(small)
    import_records(small, tmp_path, [verdict_record("s01", "pass")], name="again.jsonl")
    assert project_data_version(small) >= before


def test_a_resolution_is_a_change(client, small, review_item, rate):
    item = review_item(small, {"$.total": ["1,200.00", "1,290.00"]})  # built by hand: no touch
    dashboard_refresh(project=small)
    raters = [member(small, Role.RATER, username=f"r{n}") for n in range(2)]

    def resolve():
        for rater in raters:
            rate(rater, item, {"$.total": "1200"})
        assert item.questions.get().resolutions.exists()

    assert_stale_after(client, small, resolve)


def test_a_split_drawn_is_a_change(client, project, tmp_path):
    small_project(project, tmp_path, draw=False)
    assert_stale_after(client, project, lambda: split_draw(actor=None, project=project, seed=3))


def test_late_items_drawn_into_the_split_are_a_change(small):
    Item.objects.create(project=small, external_id="late-by-hand")  # no touch of its own
    before = inputs_fingerprint(small)
    assert split_extend(project=small) == 1
    assert inputs_fingerprint(small) != before


def test_verdicts_of_a_judge_run_are_a_change(client, project, tmp_path):
    labelled_project(project, tmp_path, n=4)
    dashboard_refresh(project=project)

    def run():
        with WireServer("openai-compatible", answer=lambda r: Say(answer(r["json"]))) as srv:
            config = judge(project, srv.url).config
            run_execute(run_create(config=config, split="all", confirm_held_out=True, limit=2))
        assert Verdict.objects.filter(item__project=project).count() == 2

    assert_stale_after(client, project, run)


def test_verdicts_of_a_baseline_are_a_change(client, project, tmp_path):
    labelled_project(project, tmp_path, n=4)
    dashboard_refresh(project=project)
    assert_stale_after(
        client,
        project,
        lambda: baseline_run(project=project, criterion="faithful", baseline=Baseline("exact")),
    )


def test_an_items_slices_edited_in_the_admin_are_a_change(client, small):
    admin = member(small, Role.ADMIN, username="slicer")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    item = Item.objects.get(project=small, external_id="s01")
    slices = list(small.slices.values_list("pk", flat=True))
    before = inputs_fingerprint(small)
    client.force_login(admin)
    url = reverse("admin:reviews_item_change", args=[item.pk])
    response = client.post(url, {"title": item.title, "slices": slices})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert inputs_fingerprint(small) != before


def test_another_projects_data_leaves_this_one_fresh(client, small, tmp_path):
    from tests.factories import ProjectFactory

    other = ProjectFactory()
    import_records(other, tmp_path, [item_record("x1")], name="other.jsonl")
    assert inputs_fingerprint(small) == latest_snapshot(small).fingerprint
