"""FORMATS §1 TextFlow evaluated results: both variants, majority rule, byte-exact export."""

import json
from pathlib import Path

import pytest

from judging.formats.textflow import (
    dump_textflow,
    majority,
    normalise_verdict,
    parse_textflow,
)
from reviews.formats.errors import FormatError

DATA = Path(__file__).resolve().parent.parent / "data"
EXAMPLE = DATA / "examples" / "textflow-evaluated.json"


def upstream(**fields):
    base = {
        "key": "wiki1",
        "question_id": "1",
        "question": "How many nodes?",
        "response": "12",
        "answer": "12",
        "decision1": "Correct",
        "decision2": "Correct",
        "decision3": "Correct",
        "final_decision": "Correct",
    }
    return base | fields


def derived(**fields):
    base = {
        "key": "code7",
        "question_id": "2",
        "question": "Initial value?",
        "response": "0",
        "answers": ["0", "zero"],
        "decision1": {"verdict": "Correct", "explanation": "matches", "model": "gpt-4o"},
        "decision2": {"verdict": "Correct", "explanation": "same", "model": "claude"},
        "decision3": {"verdict": "Incorrect", "explanation": "no", "model": "gemini"},
        "final_decision": "Correct",
    }
    return base | fields


def parse(records, file="tf.json"):
    return parse_textflow(json.dumps(records).encode(), file=file)


def test_example_file_parses_with_flags():
    tf = parse_textflow(EXAMPLE.read_bytes(), file=EXAMPLE.name)
    assert tf.variant == "upstream" and len(tf.records) == 30
    assert [r.file_key for r in tf.records] == [str(i) for i in range(30)]
    assert tf.accuracy == pytest.approx(22 / 30)
    by_key = {r.file_key: r for r in tf.records}
    free_text = by_key["22"]
    assert free_text.raw_decisions[1].startswith("Incorrect\n\nThe provided answer")
    assert free_text.verdicts == ["Incorrect"] * 3 and not free_text.split_vote
    assert not free_text.three_way_split
    split = by_key["29"]
    assert split.verdicts == ["Correct", "unparsed", "Incorrect"]
    assert split.three_way_split and split.split_vote and split.final_decision == "Correct"
    assert {k for k, r in by_key.items() if r.split_vote} == {"7", "15", "23", "28", "29"}
    first = by_key["0"]
    assert (first.key, first.question_id, first.answer, first.answers) == (
        "wiki90012",
        "1",
        "Water the plant lightly a day before repotting.",
        None,
    )
    assert first.item_id == "wiki90012/1"
    assert first.evidence_candidates == ["images/wiki90012.png", "images/wiki90012.jpeg"]


def test_export_is_byte_identical_to_the_upstream_file():
    data = EXAMPLE.read_bytes()
    assert dump_textflow(parse_textflow(data, file="t.json").records) == data


@pytest.mark.parametrize(
    ("raw", "verdict"),
    [
        ("Correct", "Correct"),
        ("incorrect", "Incorrect"),
        ("Incorrect\n\nThe answer says 13", "Incorrect"),
        ("**Correct**", "Correct"),
        ("Correct.", "Correct"),
        ("  correct: yes", "Correct"),
        ("Not correct", "unparsed"),
        ("Partially correct", "unparsed"),
        ("", "unparsed"),
        ("The answer matches.\n\nCorrect", "unparsed"),
    ],
)
def test_normalise_verdict_first_word_rule(raw, verdict):
    assert normalise_verdict(raw) == verdict


def test_majority_rule():
    assert majority(["a", "a", "b"]) == ("a", False)
    assert majority(["b", "a", "b"]) == ("b", False)
    assert majority(["a", "b", "c"]) == (None, True)


def test_final_decision_the_majority_cannot_produce_is_an_error():
    with pytest.raises(FormatError) as exc:
        parse_textflow(
            (DATA / "bad" / "textflow-bad-final.json").read_bytes(), file="textflow-bad-final.json"
        )
    err = exc.value
    assert (err.file, err.record, err.path) == (
        "textflow-bad-final.json",
        'key "0"',
        "$.final_decision",
    )
    assert str(err) == (
        'textflow-bad-final.json, key "0", $.final_decision: final_decision '
        "'Incorrect' is not the majority 'Correct' of the raw decisions"
    )
    # Exact string comparison: "Correct." is not the raw majority "Correct".
    with pytest.raises(FormatError, match=r'key "5", \$\.final_decision'):
        parse({"5": upstream(final_decision="Correct.")})
    three = upstream(decision1="Correct", decision2="correct", decision3="Incorrect")
    assert parse({"0": three | {"final_decision": "correct"}}).records[0].three_way_split
    with pytest.raises(FormatError, match="none of the three raw decisions"):
        parse({"0": three | {"final_decision": "Correct."}})


def test_answers_only_file_is_valid():
    records = {
        "0": {k: v for k, v in upstream().items() if not k.startswith(("decision", "final"))}
    }
    tf = parse(records)
    rec = tf.records[0]
    assert tf.variant == "upstream" and not rec.has_decisions and rec.final_decision is None
    assert rec.verdicts == [] and not rec.split_vote and tf.accuracy is None
    assert json.loads(dump_textflow(tf.records)) == records


def test_derived_variant_detected_and_round_tripped():
    records = {"a": derived(), "b": derived(question_id="3", answers=["x"])}
    tf = parse(records)
    assert tf.variant == "derived"
    rec = tf.records[0]
    assert rec.answers == ["0", "zero"] and rec.answer is None
    assert rec.raw_decisions == ["Correct", "Correct", "Incorrect"]
    assert rec.judge_models == ["gpt-4o", "claude", "gemini"]
    assert rec.split_vote and not rec.three_way_split
    assert dump_textflow(tf) == dump_textflow(tf.records, variant="derived")
    out = json.loads(dump_textflow(tf))
    assert list(out) == ["0", "1"]  # keys renumbered on export
    assert out["0"] == records["a"]
    assert list(out["0"]) == list(records["a"])


def test_key_order_kept_and_keys_need_not_be_numeric():
    tf = parse(
        {
            "z": upstream(question_id="1"),
            "10": upstream(question_id="2"),
            "a": upstream(question_id="3"),
        }
    )
    assert [r.file_key for r in tf.records] == ["z", "10", "a"]


def test_extra_and_human_fields_on_export():
    tf = parse({"0": upstream(latency=1.5)})
    rec = tf.records[0]
    assert rec.extra == {"latency": 1.5}
    human = {
        rec.item_id: {
            "human_label": "Incorrect",
            "human_raters": ["ana", "ben"],
            "resolution": "majority",
        }
    }
    out = json.loads(dump_textflow(tf.records, human=human))["0"]
    assert list(out) == [
        "key",
        "question_id",
        "question",
        "response",
        "answer",
        "decision1",
        "decision2",
        "decision3",
        "final_decision",
        "latency",
        "human_label",
        "human_raters",
        "resolution",
    ]
    again = parse_textflow(dump_textflow(tf.records, human=human), file="x.json").records[0]
    assert again.extra["human_raters"] == ["ana", "ben"]


@pytest.mark.parametrize(
    ("record", "path", "reason"),
    [
        (upstream(decision2=None), "$", "upstream record ('answer') needs string decisions"),
        (
            {k: v for k, v in upstream().items() if k != "decision3"},
            "$.decision3",
            "decisions come in threes",
        ),
        (
            {k: v for k, v in upstream().items() if k != "response"},
            "$.response",
            "missing field 'response'",
        ),
        (upstream(question=["x"]), "$.question", "expected a string, got list"),
        (upstream(answers=["x"]), "$", "exactly one of 'answer'"),
        (derived(decision2="Correct"), "$", "derived record ('answers') needs decision objects"),
        (derived(decision2={"explanation": "?"}), "$.decision2.verdict", "missing string"),
        (derived(answers="0"), "$.answers", "list of strings"),
        (
            {k: v for k, v in upstream().items() if not k.startswith("decision")},
            "$.final_decision",
            "final_decision without decision1..decision3",
        ),
        ("just text", "$", "expected an object"),
    ],
)
def test_record_errors_name_file_key_and_field(record, path, reason):
    with pytest.raises(FormatError) as exc:
        parse({"0": upstream(), "7": record})
    err = exc.value
    assert (err.file, err.record, err.path) == ("tf.json", 'key "7"', path)
    assert reason in err.reason


def test_file_level_errors():
    with pytest.raises(
        FormatError, match=r'key "1", \$: a derived record in a file of upstream records'
    ):
        parse({"0": upstream(), "1": derived()})
    with pytest.raises(FormatError, match=r'key "1", \$\.question_id: duplicate key/question_id'):
        parse({"0": upstream(), "1": upstream()})
    with pytest.raises(FormatError, match=r"^tf\.json, \$: expected a non-empty JSON object"):
        parse([upstream()])
    with pytest.raises(FormatError, match=r"^tf\.json, \$: invalid JSON"):
        parse_textflow(b'{"0": {', file="tf.json")
    assert parse({"0": upstream(question_id=3)}).records[0].question_id == "3"
