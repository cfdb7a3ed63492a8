"""Panels vote model-balanced; ties (and dissent, by choice) become human questions."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from judging.models import Panel
from judging.reports.agreement.panels import panel_item_votes, panel_samples
from judging.reports.agreement.report import criterion_input
from judging.services.calibration.panels import (
    PanelError,
    panel_configure,
    panel_decide,
    panel_result,
)
from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute
from reviews.models import Question
from tests.judging.run_helpers import judge, labelled_project, sent_data
from tests.judging.wire_server import Say, WireServer


def by_model(request):
    """m1 always passes; m2 fails odd outputs; m3 passes."""
    body = request["json"]
    odd = int(sent_data(body)["output"].split()[-1]) % 2 == 1
    label = "fail" if body["model"] == "m2" and odd else "pass"
    return Say(json.dumps({"label": label}))


@pytest.fixture
def panel_of(project, tmp_path):
    labelled_project(project, tmp_path, n=6)

    def build(models, rule="majority", send_dissent=False):
        with WireServer("openai-compatible", answer=by_model) as srv:
            for model in models:
                config = judge(project, srv.url, name=model, model=model).config
                run_execute(run_create(config=config, split="all", confirm_held_out=True))
        return panel_configure(
            project=project,
            name="p",
            rule=rule,
            send_dissent=send_dissent,
            members=[f"{model}@1" for model in models],
        )

    return build


def questions():
    return sorted(
        Question.objects.filter(key="faithful").values_list("item__external_id", flat=True)
    )


def test_two_groups_that_disagree_tie_and_go_to_humans(panel_of):
    result = panel_decide(panel=panel_of(["m1", "m2"]))
    assert len(result.decided) == 3 and len(result.ties) == 3 and result.sent == 3
    assert questions() == ["i01", "i03", "i05"]


def test_majority_decides_and_dissent_is_sent_only_by_choice(panel_of):
    panel = panel_of(["m1", "m2", "m3"])
    result = panel_decide(panel=panel)
    assert (len(result.decided), len(result.dissent), result.sent) == (6, 3, 0)
    panel.send_dissent = True
    panel.save()
    assert panel_decide(panel=panel).sent == 3
    assert questions() == ["i01", "i03", "i05"]


def test_unanimous_sends_any_disagreement(panel_of):
    result = panel_decide(panel=panel_of(["m1", "m2", "m3"], rule="unanimous"))
    assert (len(result.decided), len(result.ties), result.sent) == (3, 3, 3)


def test_panel_without_members_is_refused(project):
    with pytest.raises(PanelError, match="it has no members"):
        panel_decide(panel=Panel.objects.create(project=project, name="empty"))


def test_a_new_version_of_a_member_does_not_join_the_panel(project, tmp_path, panel_of):
    """Members are pinned: m2's v2 (which fails everything) is run, and the panel's vote and
    its report row stay those of m1@1 and m2@1."""
    panel = panel_of(["m1", "m2", "m3"])
    before = panel_decide(panel=panel)
    report_before = panel_row(project)
    with WireServer("openai-compatible", answer=lambda r: Say('{"label": "fail"}')) as srv:
        config = judge(project, srv.url, name="m2", model="m2", prompt="Strict: {{ labels }}")
        run_execute(run_create(config=config.config, split="all", confirm_held_out=True))
    assert config.version.number == 2
    after = panel_decide(panel=panel)
    assert (after.decided, after.ties) == (before.decided, before.ties)
    row = panel_row(project)
    assert [m["ref"] for m in row["panel"]["members"]] == ["m1@1", "m2@1", "m3@1"]
    assert (row["n"], row["cohen_kappa"]) == (report_before["n"], report_before["cohen_kappa"])


def panel_row(project):
    from judging.reports.agreement.report import agreement_report

    report = agreement_report(actor=None, project=project, split="all")
    (row,) = [r for r in report["results"] if r["judge"] == "panel:p"]
    return row


def test_a_member_that_did_not_judge_an_item_is_named_not_silently_undecided(
    project, tmp_path, panel_of
):
    panel = panel_of(["m1", "m2"])
    with WireServer("openai-compatible", answer=by_model) as srv:
        config = judge(project, srv.url, name="m3", model="m3").config
        run_execute(run_create(config=config, split="all", limit=4, confirm_held_out=True))
    panel = panel_configure(project=project, name="q", rule="majority", members=[
        "m1@1", "m2@1", "m3@1"])  # fmt: skip
    result = panel_decide(panel=panel)
    assert {ref: len(items) for ref, items in result.missing.items()} == {
        "m1@1": 0,
        "m2@1": 0,
        "m3@1": 2,
    }
    out = StringIO()
    call_command("panel_vote", "--project", project.slug, "--panel", "q", stdout=out)
    assert "m3@1 did not judge 2 item(s): i04, i05" in out.getvalue()


def test_panel_configure_refuses_unknown_members_and_a_changed_membership(project, panel_of):
    panel_of(["m1", "m2"])
    with pytest.raises(PanelError, match="judge 'm1' has no version 7 \\(versions: m1@1\\)"):
        panel_configure(project=project, name="x", rule="majority", members=["m1@7"])
    with pytest.raises(PanelError, match="name the version of judge 'm1' as NAME@VERSION"):
        panel_configure(project=project, name="x", rule="majority", members=["m1"])
    with pytest.raises(PanelError, match="exists with majority of m1@1, m2@1"):
        panel_configure(project=project, name="p", rule="majority", members=["m1@1"])
    assert not Panel.objects.filter(name="x").exists()
    same = panel_configure(project=project, name="p", rule="majority", members=["m2@1", "m1@1"])
    assert same.members.count() == 2


def test_pairwise_runs_both_orders_and_inconsistent_pairs_go_to_humans(project, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    from judging.models import Criterion, Verdict
    from judging.services.calibration.send_to_humans import inconsistent_pair_items
    from tests.judging.run_helpers import judge

    labelled_project(project, tmp_path, n=2)
    Criterion.objects.create(
        project=project, name="preference", labels=["A", "B", "tie"], pairwise=True, sha256="p"
    )
    from reviews.models import Item

    for item in Item.objects.all():
        item.metadata = {"pairwise": {"preference": {"A": "short", "B": "long"}}}
        item.save()
    first = lambda r: Say(json.dumps({"winner": "first"}))  # noqa: E731  (position bias)
    with WireServer("openai-compatible", answer=first) as srv:
        config = judge(project, srv.url, criterion="preference").config
        run_execute(run_create(config=config, split="all", confirm_held_out=True))
    orders = set(Verdict.objects.values_list("display_order", "label"))
    assert orders == {("AB", "A"), ("BA", "B")}
    criterion = Verdict.objects.first().criterion
    assert len(inconsistent_pair_items(criterion=criterion)) == 2
    out = StringIO()
    call_command("send_to_humans", "--project", project.slug, "--criterion", "preference",
                 "--inconsistent-pairs", stdout=out)  # fmt: skip
    assert "2 questions created" in out.getvalue()


def test_one_panel_rule_an_unknown_or_unparsed_label_abstains():
    """The report's rule won: a sample outside the criterion's labels abstains (it used to vote
    in `panel_decide`), an item with only such samples is left out as unparsed, not a tie."""
    by_item = {
        "a": {"m1": ["pass"], "m2": ["maybe"]},  # m2 abstains: m1 decides
        "b": {"m1": ["unparsed"], "m2": ["maybe"]},  # nobody votes
        "c": {"m1": ["pass"], "m2": ["fail"]},
        "d": {"m1": ["pass"], "m2": ["pass"], "m3": ["fail"]},
    }
    votes = panel_item_votes(by_item, ["pass", "fail"], "majority")
    assert votes.labels == {"a": "pass", "d": "pass"}
    assert (votes.ties, votes.unparsed_only, votes.unparsed_samples) == ({"c"}, {"b"}, 3)
    assert votes.dissent == {"d"}  # m3 voted otherwise; on a, m2 cast no vote at all
    unanimous = panel_item_votes(by_item, ["pass", "fail"], "unanimous")
    assert unanimous.labels == {"a": "pass"} and unanimous.ties == {"c", "d"}


def test_the_service_and_the_report_vote_a_panel_alike(project, panel_of):
    """`panel_decide` and the agreement report's panel row go through the same rule: the same
    items decided the same way, the same items left for people."""
    panel = panel_of(["m1", "m2", "m3"], rule="unanimous")
    result, criterion = panel_result(panel)
    names = dict(project.items.values_list("pk", "external_id"))
    reported = criterion_input(criterion, project.items.all(), names).panels
    (report_panel,) = [p for p in reported if p.name == panel.name]
    votes = panel_item_votes(panel_samples(report_panel), criterion.labels, report_panel.rule)
    assert {names[pk]: label for pk, label in result.decided.items()} == votes.labels
    assert {names[pk] for pk in result.ties} == votes.ties | votes.unparsed_only
    assert len(result.decided) == 3
