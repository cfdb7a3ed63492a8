"""Panels vote model-balanced; ties (and dissent, by choice) become human questions."""

import json

import pytest

from judging.models import Panel
from judging.services.panels import PanelError, panel_decide
from judging.services.runner import run_execute
from judging.services.runs import run_create
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
        panel = Panel.objects.create(
            project=project, name="p", rule=rule, send_dissent=send_dissent
        )
        with WireServer("openai-compatible", answer=by_model) as srv:
            for model in models:
                config = judge(project, srv.url, name=model, model=model).config
                run_execute(run_create(config=config, split="all", confirm_held_out=True))
                panel.judges.add(config)
        return panel

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


def test_panel_without_judges_is_refused(project):
    with pytest.raises(PanelError, match="every judge needs a version"):
        panel_decide(panel=Panel.objects.create(project=project, name="empty"))


def test_pairwise_runs_both_orders_and_inconsistent_pairs_go_to_humans(project, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    from judging.models import Criterion, Verdict
    from judging.services.send_to_humans import inconsistent_pair_items
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
