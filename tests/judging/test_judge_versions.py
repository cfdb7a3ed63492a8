"""A judge is a version: each version of a judge run from Evalsite is its own report row and
dashboard row, one of them gates, and a panel's pinned members keep its figures and its gate
when another judge (or version) is run.

The project: 10 items i00..i09 (humans: even `pass`, odd `fail`), split 5/5. Judge `j` v1
(a lenient prompt) says `pass` to everything; v2 (a strict prompt) agrees with the humans.
"""

import json
import re

import pytest
from django.urls import reverse

from judging.reports.agreement.report import agreement_report
from judging.services.calibration.panels import panel_configure
from judging.services.dashboard import dashboard_compute, dashboard_refresh
from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute
from reviews.models import Role
from tests.factories import member
from tests.judging.helpers import see_held_out
from tests.judging.run_helpers import judge, labelled_project, sent_data
from tests.judging.wire_server import Say, WireServer

LENIENT = "Is it faithful? {{ labels }}."
STRICT = "Strict: is it faithful to the reference? {{ labels }}."


def by_prompt(request):
    body = request["json"]
    data = sent_data(body)
    strict = "Strict" in json.dumps(body["messages"][0])
    right = "pass" if data["output"] == data["reference"] else "fail"
    return Say(json.dumps({"label": right if strict else "pass"}))


@pytest.fixture
def runs(project, tmp_path):
    labelled_project(project, tmp_path, n=10)
    with WireServer("openai-compatible", answer=by_prompt) as srv:

        def run(name, prompt, model="stub", split="all"):
            saved = judge(project, srv.url, name=name, prompt=prompt, model=model)
            run_execute(run_create(config=saved.config, split=split, confirm_held_out=True))
            return saved.version

        yield run


def rows_of(report):
    return {row["judge_ref"]: row for row in report["results"]}


def test_two_versions_of_one_judge_are_two_report_rows(project, runs):
    runs("j", LENIENT)
    runs("j", STRICT)
    rows = rows_of(agreement_report(actor=None, project=project, split="all"))
    assert set(rows) == {"j@1", "j@2"}
    for number in (1, 2):
        row = rows[f"j@{number}"]
        assert (row["judge"], row["judge_name"], row["judge_version"]) == (
            "openai-compatible/stub",
            "j",
            number,
        )
        assert row["n"] == 10
    assert rows["j@1"]["observed_agreement"]["value"] == 0.5
    assert rows["j@2"]["observed_agreement"]["value"] == 1.0


def test_a_version_with_more_samples_counts_its_own_samples_only(project, runs):
    """v2 differs from v1 only in its samples (3): it reuses v1's calls for sample 0, and v1's
    row still counts one sample per item."""
    runs("j", STRICT)
    with WireServer("openai-compatible", answer=by_prompt) as srv:
        saved = judge(project, srv.url, name="j", prompt=STRICT, samples=3)
        run_execute(run_create(config=saved.config, split="all", confirm_held_out=True))
    report = agreement_report(actor=None, project=project, split="all")
    rows = rows_of(report)
    assert set(rows) == {"j@1", "j@2"}
    assert rows["j@1"]["judge_configurations"] == rows["j@2"]["judge_configurations"]
    assert (rows["j@1"]["n_judged"], rows["j@2"]["n_judged"]) == (10, 10)
    assert rows["j@1"]["unparsed_samples"] == 0
    # Three samples agreeing with people on each item: no tie, kappa 1 in both rows.
    assert rows["j@2"]["cohen_kappa"]["value"] == rows["j@1"]["cohen_kappa"]["value"] == 1.0


def test_dashboard_rows_per_version_the_gating_one_marked_and_each_failing_criterion_once(
    project, runs, client
):
    runs("j", LENIENT)
    runs("j", STRICT, split="calibration")  # v2 has not looked at held-out: v1 still gates
    payload = dashboard_compute(project)
    (faithful,) = payload["criteria"]
    rows = {row["label"]: row for row in faithful["rows"]}
    assert set(rows) == {"j v1", "j v2"}
    assert (rows["j v1"]["gating"], rows["j v2"]["gating"]) == (True, False)
    assert rows["j v2"]["gate"] is None and rows["j v2"]["n_judged"] == 0
    # Calibration cells belong to their own version: v1 on 5 items, v2 on 5.
    assert rows["j v1"]["calibration"]["cohen_kappa"]["value"] == 0.0
    assert rows["j v2"]["calibration"]["cohen_kappa"]["value"] == 1.0
    (decision,) = payload["decisions"]
    assert (decision["label"], decision["judge_refs"], decision["failing_criteria"]) == (
        "j",
        ["j@1"],
        ["faithful"],
    )
    assert decision["failing"][0]["reasons"][0] == "held-out n = 5 < 50"

    dashboard_refresh(project=project)
    see_held_out(client, member(project, Role.ADMIN), project)
    page = client.get(reverse("project_dashboard", args=[project.slug])).content.decode()
    assert page.count('data-judge="j@1"') == 1 and page.count('data-judge="j@2"') == 1
    assert page.count("not gating: j@1 gates") == 1  # v2 ran on calibration only
    failing = re.findall(r"Failing:</p><ul[^>]*>(.*?)</ul>", page, re.S)
    assert len(failing) == 1 and failing[0].count(">faithful</a>") == 1
    assert "held-out n = 5 &lt; 50" in failing[0]


def test_two_versions_on_held_out_are_two_rows_and_only_the_later_gates(project, runs, client):
    runs("j", LENIENT)
    runs("j", STRICT)
    dashboard_refresh(project=project)
    see_held_out(client, member(project, Role.ADMIN), project)
    page = client.get(reverse("project_dashboard", args=[project.slug])).content.decode()
    cells = re.findall(r'data-judge="(j@\d)">(j v\d)', page)
    assert cells == [("j@1", "j v1"), ("j@2", "j v2")]
    assert page.count("not gating: j@2 gates") == 1
    assert page.count('<span class="badge badge-accent">gates</span>') == 1


def test_a_new_experimental_judge_changes_neither_the_panel_nor_its_gate(project, runs):
    runs("j", STRICT)
    runs("k", STRICT, model="other")
    panel_configure(project=project, name="pair", rule="majority", members=["j@1", "k@1"])
    before = dashboard_compute(project)
    runs("exp", LENIENT, model="experimental")
    after = dashboard_compute(project)

    def panel(payload):
        (row,) = [r for r in payload["criteria"][0]["rows"] if r["judge"] == "panel:pair"]
        decision = next(d for d in payload["decisions"] if d["judge"] == "panel:pair")
        return row, decision

    (row_before, decision_before), (row_after, decision_after) = panel(before), panel(after)
    assert [m["ref"] for m in row_after["panel"]["members"]] == ["j@1", "k@1"]
    for key in ("n", "n_judged", "cohen_kappa", "confusion_matrix", "gate", "model_groups"):
        assert row_after[key] == row_before[key], key
    assert decision_after == decision_before
    assert {row["judge_ref"] for row in after["criteria"][0]["rows"]} == {
        "j@1",
        "k@1",
        "exp@1",
        "panel:pair",
    }


def test_the_item_page_shows_each_versions_samples_apart(project, runs, client):
    from reviews.models import Item

    runs("j", LENIENT)
    runs("j", STRICT)
    see_held_out(client, member(project, Role.ADMIN), project)
    item = Item.objects.get(project=project, external_id="i01")  # humans: fail
    page = client.get(reverse("dashboard_item", args=[project.slug, item.pk])).content.decode()
    blocks = re.findall(r'<div class="judge-block( disagrees)?">\s*<strong>([^<]+)</strong>', page)
    assert blocks == [(" disagrees", "j@1"), ("", "j@2")]


def test_each_version_row_counts_its_own_stale_verdicts(project, runs, tmp_path):
    """Two outputs change after both versions ran: each version's row leaves out, and counts
    apart, its own verdicts on the earlier outputs; the compare counts only current ones."""
    from tests.judging.test_item_revisions import _changed_outputs

    runs("j", LENIENT)
    runs("j", STRICT)
    _changed_outputs(project, tmp_path, changed={2, 4})
    rows = rows_of(agreement_report(actor=None, project=project, split="all"))
    for ref in ("j@1", "j@2"):
        assert (rows[ref]["n"], rows[ref]["n_judged"], rows[ref]["stale_verdicts"]) == (8, 8, 2)
    runs("j", STRICT)  # v2 again: asks only the two changed items
    rows = rows_of(agreement_report(actor=None, project=project, split="all"))
    assert (rows["j@2"]["n_judged"], rows["j@2"]["stale_verdicts"]) == (10, 2)
    assert (rows["j@1"]["n_judged"], rows["j@1"]["stale_verdicts"]) == (8, 2)


def test_the_item_page_names_each_stale_sample_by_its_version(project, runs, client, tmp_path):
    """Verdicts given on an earlier output are named like the current ones, `NAME@VERSION`,
    never by the model alone (which two versions share)."""
    from reviews.models import Item
    from tests.judging.test_item_revisions import _changed_outputs

    runs("j", LENIENT)
    runs("j", STRICT)
    _changed_outputs(project, tmp_path, changed={2})
    see_held_out(client, member(project, Role.ADMIN), project)
    item = Item.objects.get(project=project, external_id="i02")
    page = client.get(reverse("dashboard_item", args=[project.slug, item.pk])).content.decode()
    stale = page[page.index("given on an earlier output") :]
    names = re.findall(r"<li>([^<]+) <span class=\"badge\">sample", stale)
    assert sorted(name.strip() for name in names) == ["j@1", "j@2"]
