"""Failure analysis: buckets, append-only tags (the latest counts), counts per bucket and slice,
representative items in the report, and refusals across projects."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from judging.models import DEFAULT_FAILURE_BUCKETS, FailureBucket, FailureTag
from judging.reports.agreement.build import disagreeing_label
from judging.selectors import disagreement_rows
from judging.services.calibration.failures import (
    buckets_for,
    current_tags,
    failure_summary,
    failure_tag,
)
from judging.services.dashboard import dashboard_refresh
from reviews.models import AppendOnlyError, Item, Role, Slice
from tests.factories import ItemFactory, ProjectFactory, member
from tests.judging.helpers import see_held_out, small_project

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_fresh_cache")]

GPT = "openai/gpt-4o"


@pytest.fixture
def adjudicator(project):
    return member(project, Role.ADJUDICATOR, Role.ADMIN)


def bucket(project, name) -> FailureBucket:
    return next(b for b in buckets_for(project) if b.name == name)


def tag(project, actor, item, name, *, judge=GPT, note="", criterion="faithful"):
    return failure_tag(
        actor=actor,
        project=project,
        item=item,
        criterion=criterion,
        judge=judge,
        bucket_pk=bucket(project, name).pk if name else None,
        note=note,
    )


def test_a_project_starts_with_the_five_usual_buckets(project):
    names = [b.name for b in buckets_for(project)]
    assert (
        names
        == list(DEFAULT_FAILURE_BUCKETS)
        == [
            "task ambiguity",
            "context omission",
            "model reasoning",
            "grader/judge error",
            "slice regression",
        ]
    )
    assert [b.name for b in buckets_for(project)] == names  # no second set
    assert FailureBucket.objects.filter(project=project).count() == 5


def test_edited_buckets_are_kept(project):
    FailureBucket.objects.create(project=project, name="rubric gap", position=1)
    assert [b.name for b in buckets_for(project)] == ["rubric gap"]


def test_tagging_is_append_only_and_the_latest_tag_counts(project):
    actor = member(project, Role.ADJUDICATOR)
    item = ItemFactory(project=project)
    first = tag(project, actor, item, "task ambiguity", note="  unclear rubric ")
    second = tag(project, actor, item, "grader/judge error", note="judge misread")
    other_judge = tag(project, actor, item, "model reasoning", judge="anthropic/claude")
    assert FailureTag.objects.count() == 3
    assert first.note == "unclear rubric"
    latest = current_tags(project)
    assert latest[(item.pk, "faithful", GPT)] == second
    assert latest[(item.pk, "faithful", "anthropic/claude")] == other_judge
    untagged = tag(project, actor, item, None, note="not a failure after all")
    assert current_tags(project)[(item.pk, "faithful", GPT)] == untagged
    assert untagged.bucket is None
    with pytest.raises(AppendOnlyError):
        FailureTag.objects.filter(pk=first.pk).update(note="rewritten")
    with pytest.raises(AppendOnlyError):
        second.delete()
    first.refresh_from_db()
    assert first.bucket.name == "task ambiguity"  # history stays


def test_a_bucket_or_item_of_another_project_is_refused(project):
    actor = member(project, Role.ADJUDICATOR)
    other = ProjectFactory()
    foreign_bucket = buckets_for(other)[0]
    item = ItemFactory(project=project)
    with pytest.raises(ValidationError, match="Unknown failure bucket"):
        failure_tag(
            actor=actor,
            project=project,
            item=item,
            criterion="faithful",
            judge=GPT,
            bucket_pk=foreign_bucket.pk,
            note="",
        )
    with pytest.raises(ValidationError, match="another project"):
        failure_tag(
            actor=actor,
            project=project,
            item=ItemFactory(project=other),
            criterion="faithful",
            judge=GPT,
            bucket_pk=None,
            note="",
        )
    assert not FailureTag.objects.exists()


def test_the_tag_view_refuses_a_foreign_bucket_and_a_foreign_item(client, project):
    actor = member(project, Role.ADJUDICATOR)
    item = ItemFactory(project=project)
    other = ProjectFactory()
    client.force_login(actor)
    url = reverse("dashboard_tag", args=[project.slug, item.pk])
    response = client.post(
        url, {"criterion": "faithful", "judge": GPT, "bucket": buckets_for(other)[0].pk}
    )
    assert response.status_code == 200 and b"Unknown failure bucket." in response.content
    foreign = reverse("dashboard_tag", args=[project.slug, ItemFactory(project=other).pk])
    assert client.post(foreign, {"criterion": "faithful", "judge": GPT}).status_code == 404
    assert not FailureTag.objects.exists()


def test_the_tag_view_refuses_a_note_past_its_limit(client, project):
    """A tag is history (append-only): a 10 MB note would stay in it for good."""
    client.force_login(member(project, Role.ADJUDICATOR))
    url = reverse("dashboard_tag", args=[project.slug, ItemFactory(project=project).pk])
    response = client.post(url, {"criterion": "faithful", "judge": GPT, "note": "x" * 10_001})
    assert response.status_code == 200 and b"at most 10000 characters" in response.content
    assert not FailureTag.objects.exists()


def _row(item, judge=GPT):
    return {
        "item_pk": item.pk,
        "item": item.external_id,
        "criterion": "faithful",
        "judge": judge,
        "human": "pass",
        "judged": "fail",
    }


def test_failure_summary_counts_per_bucket_and_slice_with_three_examples(project):
    actor = member(project, Role.ADJUDICATOR)
    items = [ItemFactory(project=project, external_id=f"i{n}") for n in range(7)]
    safety = Slice.objects.create(project=project, name="safety")
    long = Slice.objects.create(project=project, name="long")
    for item in items[:3]:
        item.slices.add(safety)
    items[0].slices.add(long)
    for item in items[:5]:
        tag(project, actor, item, "grader/judge error", note=f"note {item.external_id}")
    tag(project, actor, items[5], "task ambiguity")
    tag(project, actor, items[0], "task ambiguity", judge="anthropic/claude")  # another judge
    rows = [_row(i) for i in items] + [_row(items[0], "anthropic/claude")]
    slices_of = {i.pk: sorted(s.name for s in i.slices.all()) for i in items}
    summary = failure_summary(rows, current_tags(project), slices_of)
    assert summary["per_bucket"] == [
        ("grader/judge error", 5),
        ("task ambiguity", 2),
        ("untagged", 1),
    ]
    assert summary["per_slice"] == {
        "grader/judge error": {"safety": 3, "long": 1, "(no slice)": 2},
        "task ambiguity": {"safety": 1, "long": 1, "(no slice)": 1},
        "untagged": {"(no slice)": 1},
    }
    examples = summary["examples"]
    assert [len(examples[b]) for b in ("grader/judge error", "task ambiguity", "untagged")] == [
        3,
        2,
        1,
    ]
    assert [e["item"] for e in examples["grader/judge error"]] == ["i0", "i1", "i2"]
    assert examples["grader/judge error"][0]["note"] == "note i0"
    assert examples["untagged"][0]["item"] == "i6" and examples["untagged"][0]["note"] == ""


def test_retagging_moves_a_disagreement_between_buckets(project):
    actor = member(project, Role.ADJUDICATOR)
    item = ItemFactory(project=project)
    tag(project, actor, item, "task ambiguity")
    tag(project, actor, item, "context omission")
    summary = failure_summary([_row(item)], current_tags(project), {item.pk: []})
    assert summary["per_bucket"] == [("context omission", 1)]


def test_failure_page_and_markdown_report_show_representative_items(
    client, project, adjudicator, tmp_path
):
    small_project(project, tmp_path)
    snapshot = dashboard_refresh(project=project)
    rows, _ = disagreement_rows(project, snapshot.payload)
    gpt_rows = [r for r in rows if r["judge"] == GPT]
    assert len(gpt_rows) >= 4  # the small project's gpt-4o is wrong on 8 items
    tagged = gpt_rows[:3]  # at least one stays untagged
    for n, row in enumerate(tagged):
        item = Item.objects.get(pk=row["item_pk"])
        tag(
            project,
            adjudicator,
            item,
            "context omission" if n < 2 else "slice regression",
            note=f"why {n}",
        )
    see_held_out(client, adjudicator, project)

    page = client.get(reverse("dashboard_failures", args=[project.slug])).content.decode()
    assert f"({len(rows)} disagreements)" in page
    assert "<h3>context omission</h3>" in page and "<h3>slice regression</h3>" in page
    for row in tagged:
        assert f'href="{reverse("dashboard_item", args=[project.slug, row["item_pk"]])}"' in page
    assert "context omission: 2" in page  # the bar chart states its numbers

    text = client.get(reverse("dashboard_report", args=[project.slug, "md"])).content.decode()
    assert "## Failure buckets" in text
    assert "### context omission (2)" in text and "### slice regression (1)" in text
    untagged = len(rows) - 3
    assert f"### untagged ({untagged})" in text
    for n, row in enumerate(tagged):
        assert (
            f"- {row['item']} · faithful · {GPT}: human {row['human']}, "
            f"judge {row['judged']}: why {n}"
        ) in text
    report = client.get(reverse("dashboard_report", args=[project.slug, "json"])).json()
    assert report["failure_buckets"]["per_bucket"] == {
        "context omission": 2,
        "slice regression": 1,
        "untagged": untagged,
    }
    assert len(report["failure_buckets"]["examples"]["untagged"]) == min(3, untagged)


def test_disagreement_filters(client, project, adjudicator, tmp_path):
    small_project(project, tmp_path)
    see_held_out(client, adjudicator, project)
    url = reverse("dashboard_disagreements", args=[project.slug])
    everything = client.get(url).context["rows"]
    assert everything and {r["judge"] for r in everything} <= {GPT, "anthropic/claude"}
    only_gpt = client.get(url, {"judge": GPT}).context["rows"]
    assert only_gpt == [r for r in everything if r["judge"] == GPT]
    safety = client.get(url, {"slice": "safety"}).context["rows"]
    assert safety and all("safety" in r["slices"] for r in safety)
    pair = client.get(url, {"pair": "pass → fail"}).context["rows"]
    assert pair and all((r["human"], r["judged"]) == ("pass", "fail") for r in pair)
    assert client.get(url, {"criterion": "ghost"}).context["rows"] == []


@pytest.mark.parametrize(
    ("samples", "disagrees_with_pass"),
    [
        (["fail", "fail", "pass"], "fail"),
        (["unparsed", "unparsed", "pass"], None),  # the item page once said "disagrees" here
        (["unparsed", "unparsed", "fail"], "fail"),
        (["pass", "fail"], None),  # the judge's samples tie: no label, no disagreement
        (["maybe"], None),  # not one of the criterion's labels: unparsed
    ],
)
def test_one_disagreement_rule_for_the_list_and_the_item_page(samples, disagrees_with_pass):
    """The disagreement list (dashboard parts) and the item page both ask `disagreeing_label`:
    the judge's most common parsed label against the final human label."""
    assert disagreeing_label("pass", samples, ["pass", "fail"]) == disagrees_with_pass
    assert disagreeing_label(None, samples, ["pass", "fail"]) is None
