"""The text-metrics and pass@k pages: the figures the commands print, each item or case listed,
held-out items behind *Show held-out figures*, form errors named, and who may read them."""

import pytest
from django.urls import reverse

from judging.services.calibration.splits import split_draw
from reviews.models import Role
from tests.factories import member
from tests.judging.helpers import (
    criterion_record,
    human_record,
    import_items,
    item_record,
    write_jsonl,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def sampled(project, tmp_path):
    records = [criterion_record()]
    outcomes = {"c1": ["pass", "fail", "fail"], "c2": ["fail", "fail", "fail"]}
    for case, labels in outcomes.items():
        for i, label in enumerate(labels):
            item_id = f"{case}-{i}"
            records.append(
                item_record(
                    item_id,
                    output=f"the answer is {label}",
                    reference="the answer is pass",
                    metadata={"case_id": case},
                )
            )
            records.append(human_record(item_id, "ana", label))
    import_items(project, write_jsonl(tmp_path / "samples.jsonl", records))
    return project


def test_text_metrics_page_lists_figures_and_each_item(client, sampled):
    client.force_login(member(sampled, Role.ADMIN))
    url = reverse("text_metrics", args=[sampled.slug])
    page = client.get(url, {"metrics": ["exact_match", "bleu"], "split": "all"})
    html = page.content.decode()
    assert page.status_code == 200
    report = page.context["report"]
    assert [f["metric"] for f in report["metrics"]] == ["exact_match", "bleu"]
    assert report["metrics"][0]["mean"]["value"] == pytest.approx(1 / 6)
    assert 'data-metric="bleu"' in html and "n-gram counts pooled over items" in html
    assert "c1-0" in html and "revision 1" in html
    assert len(report["items"]) == 6


def test_pass_at_k_page_shows_the_idealised_figure_labelled(client, sampled):
    client.force_login(member(sampled, Role.ADJUDICATOR))
    url = reverse("pass_at_k", args=[sampled.slug])
    page = client.get(
        url, {"criterion": "faithful", "ks": "1, 2", "group_by": "case_id", "split": "all"}
    )
    html = page.content.decode()
    report = page.context["report"]
    assert report["cases"] == 2
    assert report["pass_at_k"]["2"]["value"] == pytest.approx((2 / 3 + 0) / 2)
    assert "Idealised 1 − (1 − p)<sup>k</sup>" in html
    assert 'data-k="2"' in html


def test_a_bad_k_is_named_and_nothing_is_measured(client, sampled):
    client.force_login(member(sampled, Role.ADMIN))
    page = client.get(
        reverse("pass_at_k", args=[sampled.slug]),
        {"criterion": "faithful", "ks": "0, x", "group_by": "case_id", "split": "all"},
    )
    assert page.context["report"] is None
    assert "whole numbers separated by commas" in page.content.decode()


def test_held_out_figures_wait_for_show(client, sampled):
    split_draw(actor=None, project=sampled, seed=3)
    client.force_login(member(sampled, Role.ADMIN))
    page = client.get(
        reverse("text_metrics", args=[sampled.slug]), {"metrics": "token_f1", "split": "held_out"}
    )
    assert page.context["report"] is None
    assert "Show held-out figures" in page.content.decode()


@pytest.mark.parametrize("name", ["text_metrics", "pass_at_k"])
def test_roles(client, sampled, outsider, name):
    url = reverse(name, args=[sampled.slug])
    client.force_login(member(sampled, Role.APPROVER))
    assert client.get(url).status_code == 200
    client.force_login(member(sampled, Role.RATER))
    assert client.get(url).status_code == 403
    client.force_login(outsider)
    assert client.get(url).status_code == 404
