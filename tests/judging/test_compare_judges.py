"""`compare_judges`: two versions of a judge compared item by item, checked by hand.

20 items i00..i19 (humans: even `pass`, odd `fail`), judged by two versions of judge `j`:
- v1 (a lenient prompt) says `pass` on i01, i05, i09, i13, i17 (wrong) and is right elsewhere;
- v2 (a strict prompt) says `fail` on i00, i06, i12, i18 (wrong) and is right elsewhere.
So the 9 items where one of them is wrong are the flips; kappa is checked against scikit-learn
(a test-only oracle) and the paired bootstrap's interval is recomputed here by hand.
"""

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from sklearn.metrics import cohen_kappa_score

from judging.models import HeldOutAccess
from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute
from tests.judging.helpers import import_items, verdict_record, write_jsonl
from tests.judging.run_helpers import judge, labelled_project, sent_data
from tests.judging.wire_server import Say, WireServer

N = 20
LENIENT = "Is it faithful? {{ labels }}."
STRICT = "Strict: is it faithful to the reference?\nAnswer with one of {{ labels }}."
V1_WRONG = {1, 5, 9, 13, 17}
V2_WRONG = {0, 6, 12, 18}
LABELS = ["pass", "fail"]


def truth(i):
    return "pass" if i % 2 == 0 else "fail"


def flip(label):
    return "fail" if label == "pass" else "pass"


def said(i, strict):
    wrong = V2_WRONG if strict else V1_WRONG
    return flip(truth(i)) if i in wrong else truth(i)


def by_prompt(request):
    body = request["json"]
    i = int(sent_data(body)["output"].split()[-1])
    strict = "Strict" in json.dumps(body["messages"][0])
    return Say(json.dumps({"label": said(i, strict)}))


@pytest.fixture
def versions(project, tmp_path):
    labelled_project(project, tmp_path, n=N)
    with WireServer("openai-compatible", answer=by_prompt) as srv:
        for prompt in (LENIENT, STRICT):
            saved = judge(project, srv.url, name="j", prompt=prompt)
            run_execute(run_create(config=saved.config, split="all", confirm_held_out=True))
    return project


def compare(project, *args):
    out = StringIO()
    call_command("compare_judges", "--project", project.slug, *args, stdout=out)
    return out.getvalue()


def compare_json(project, *args):
    return json.loads(
        compare(project, "--criterion", "faithful", "--format", "json", "--seed", "3", *args)
    )


def kappa_by_hand(table):
    """Cohen's kappa of a 2 x 2 human x judge table: (po - pe) / (1 - pe); NaN when pe = 1."""
    n = table.sum()
    po = np.trace(table) / n
    pe = (table.sum(axis=1) * table.sum(axis=0)).sum() / n**2
    return np.nan if pe == 1 else (po - pe) / (1 - pe)


def test_flips_kappas_and_the_paired_bootstrap_match_a_hand_computation(versions):
    report = compare_json(versions, "--a", "j@1", "--b", "j@2")
    humans = [truth(i) for i in range(N)]
    a = [said(i, strict=False) for i in range(N)]
    b = [said(i, strict=True) for i in range(N)]
    assert (report["n_paired"], report["flipped"]) == (N, 9)
    assert report["flips"] == [
        {"item_id": f"i{i:02}", "a": a[i], "b": b[i], "human": humans[i]}
        for i in sorted(V1_WRONG | V2_WRONG)
    ]
    assert (report["a"]["judge"], report["a"]["version"]) == ("j", 1)
    assert (report["b"]["judge"], report["b"]["version"]) == ("j", 2)
    assert report["a"]["label_counts"] == {"pass": 15, "fail": 5}
    assert report["b"]["label_counts"] == {"pass": 6, "fail": 14}
    kappa_a = cohen_kappa_score(humans, a)
    kappa_b = cohen_kappa_score(humans, b)
    assert report["a"]["cohen_kappa"]["value"] == pytest.approx(kappa_a)
    assert report["b"]["cohen_kappa"]["value"] == pytest.approx(kappa_b)
    assert report["a"]["observed_agreement"]["value"] == pytest.approx(15 / 20)
    assert report["difference"]["cohen_kappa"]["value"] == pytest.approx(kappa_b - kappa_a)
    assert report["difference"]["observed_agreement"]["value"] == pytest.approx(1 / 20)

    # The paired bootstrap by hand: the 20 (human, a, b) triples resampled with replacement,
    # drawn as their cell counts (C order: human, A, B) with numpy's multinomial, seed 3.
    index = {label: k for k, label in enumerate(LABELS)}
    cells = np.zeros((2, 2, 2))
    for h, x, y in zip(humans, a, b, strict=True):
        cells[index[h], index[x], index[y]] += 1
    draws = np.random.default_rng(3).multinomial(N, cells.ravel() / N, size=2000)
    by_a, by_b = [], []
    for draw in draws.reshape(-1, 2, 2, 2):
        by_a.append(kappa_by_hand(draw.sum(axis=2)))
        by_b.append(kappa_by_hand(draw.sum(axis=1)))
    by_a, by_b = np.array(by_a), np.array(by_b)
    difference = by_b - by_a
    for got, values in (
        (report["a"]["cohen_kappa"], by_a),
        (report["b"]["cohen_kappa"], by_b),
        (report["difference"]["cohen_kappa"], difference),
    ):
        defined = values[~np.isnan(values)]
        assert got["ci"] == pytest.approx(list(np.quantile(defined, [0.025, 0.975])))
    assert report["bootstrap"] | {"resamples_undefined": None} == {
        "method": "percentile",
        "level": 0.95,
        "n_resamples": 2000,
        "seed": 3,
        "paired": True,
        "resamples_undefined": None,
    }
    agreement = np.trace(draws.reshape(-1, 2, 2, 2).sum(axis=3), axis1=1, axis2=2) / N  # h x A
    assert report["a"]["observed_agreement"]["ci"] == pytest.approx(
        list(np.quantile(agreement, [0.025, 0.975]))
    )


def test_the_settings_and_the_prompt_diff_are_reported(versions):
    report = compare_json(versions, "--a", "j@1", "--b", "j@2")
    changed = {s["setting"]: (s["a"], s["b"]) for s in report["settings"] if s["changed"]}
    assert set(changed) == {"prompt_sha256"}
    assert report["prompt_diff"] == [
        "--- j@1",
        "+++ j@2",
        "@@ -1 +1,2 @@",
        "-Is it faithful? {{ labels }}.",
        "+Strict: is it faithful to the reference?",
        "+Answer with one of {{ labels }}.",
    ]
    text = compare(versions, "--criterion", "faithful", "--a", "j@1", "--b", "j@2")
    assert "# j@1 vs j@2: faithful (version 1)" in text
    assert "20 paired items (both judged, with a final human label); 9 flipped." in text
    assert "| i01 | pass | fail | fail |" in text
    assert "+Strict: is it faithful to the reference?" in text


def test_a_split_counts_only_its_items_and_all_is_a_recorded_look(versions):
    held = compare_json(versions, "--a", "j@1", "--b", "j@2", "--split", "held_out")
    calibration = compare_json(versions, "--a", "j@1", "--b", "j@2", "--split", "calibration")
    assert held["n_paired"] + calibration["n_paired"] == N
    assert held["flipped"] + calibration["flipped"] == 9
    assert held["development_figures"] is False and calibration["development_figures"] is True
    looks = list(HeldOutAccess.objects.values_list("what", flat=True))
    assert looks == ["compare j@1 and j@2, criterion faithful, split held_out"]
    compare_json(versions, "--a", "j@1", "--b", "j@2")
    assert HeldOutAccess.objects.count() == 2


def test_an_imported_judge_is_named_by_provider_model(versions, tmp_path):
    records = [verdict_record(f"i{i:02}", truth(i)) for i in range(10)]
    import_items(versions, write_jsonl(tmp_path / "verdicts.jsonl", records))
    report = compare_json(versions, "--a", "openai/gpt-4o", "--b", "j@2")
    assert (report["a"]["judge"], report["a"]["version"]) == ("openai/gpt-4o", None)
    assert report["n_paired"] == 10
    assert report["flipped"] == len([i for i in V2_WRONG if i < 10])
    assert report["prompt_diff"] == []
    assert report["prompt_note"].startswith("imported verdicts carry no prompt template")


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ("j@3", "j@2", "--a: judge 'j' has no version 3 (versions: j@1, j@2)"),
        ("j", "j@2", "--a: name the version of judge 'j' as NAME@VERSION (j@1, j@2)"),
        ("nobody@1", "j@2", "--a: no judge 'nobody' in project"),
        (
            "j@1",
            "openai-compatible/stub",
            "--b: 'openai-compatible/stub' is run from Evalsite: name its version as "
            "NAME@VERSION (j@1, j@2)",
        ),
        ("j@1", "openai/none", "--b: no imported judge 'openai/none' with verdicts on 'faithful'"),
        ("j@2", "j@2", "--a and --b both name j@2"),
    ],
)
def test_a_reference_that_names_no_single_version_is_a_clear_error(versions, a, b, message):
    with pytest.raises(CommandError) as error:
        compare(versions, "--criterion", "faithful", "--a", a, "--b", b)
    assert message in str(error.value)


def test_an_unknown_criterion_is_a_clear_error(versions):
    with pytest.raises(CommandError, match="--criterion: no criterion 'tone' in project"):
        compare(versions, "--criterion", "tone", "--a", "j@1", "--b", "j@2")


def test_the_compare_page_is_reached_from_the_judge_page_and_shows_flips_and_the_diff(
    versions, client
):
    from django.urls import reverse

    from reviews.models import Role
    from tests.factories import member

    client.force_login(member(versions, Role.ADMIN))
    judge_page = client.get(reverse("judge_page", args=[versions.slug, "j"])).content.decode()
    url = reverse("judge_compare", args=[versions.slug, "j"])
    assert f'action="{url}"' in judge_page and 'id="compare-versions"' in judge_page
    page = client.get(url).content.decode()  # defaults: j@1 vs j@2 on calibration
    calibration = compare_json(versions, "--a", "j@1", "--b", "j@2", "--split", "calibration")
    assert f'<strong id="n-flipped">{calibration["flipped"]}</strong>' in page
    for flip in calibration["flips"]:
        assert f"<td>{flip['item_id']}</td>" in page
    assert '<span class="diff-add">+Strict: is it faithful to the reference?</span>' in page
    assert '<span class="diff-del">-Is it faithful? {{ labels }}.</span>' in page
    # Every item (held-out too) stays hidden until the reader asks to see held-out figures.
    query = {"criterion": "faithful", "a": "j@1", "b": "j@2", "split": "all"}
    looks = HeldOutAccess.objects.count()
    hidden = client.get(url, query).content.decode()
    assert "Held-out figures are hidden" in hidden and 'id="n-flipped"' not in hidden
    assert HeldOutAccess.objects.count() == looks
    client.post(reverse("held_out_show", args=[versions.slug]))
    shown = client.get(url, query).content.decode()
    assert '<strong id="n-flipped">9</strong>' in shown


def test_the_compare_page_refuses_outsiders_and_raters(versions, client, outsider):
    from django.urls import reverse

    from reviews.models import Role
    from tests.factories import member

    url = reverse("judge_compare", args=[versions.slug, "j"])
    client.force_login(outsider)
    assert client.get(url).status_code == 404
    client.force_login(member(versions, Role.RATER))
    assert client.get(url).status_code == 403
    client.force_login(member(versions, Role.ADMIN))
    assert client.get(reverse("judge_compare", args=[versions.slug, "nobody"])).status_code == 404
