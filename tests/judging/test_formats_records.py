"""FORMATS §4 typed records from JSONL and CSV: reviews' reader with reviews' `item` and
judging's kinds (pure, no database)."""

import io
import json
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

from judging.formats.records import SCHEMAS as JUDGING_SCHEMAS
from judging.formats.records import Criterion, HumanLabel, PairwiseVerdict, Verdict
from reviews.formats import records
from reviews.formats.errors import FormatError, iter_json_lines
from reviews.formats.records import ITEM_SCHEMAS, Item, record_adapter
from reviews.formats.review_file import iter_review_jsonl
from reviews.services.imports.records import record_schemas

SCHEMAS = {**ITEM_SCHEMAS, **JUDGING_SCHEMAS}
KINDS = tuple(SCHEMAS)
RECORD_ADAPTER = record_adapter(SCHEMAS)
DATA = Path(__file__).resolve().parent.parent / "data"


def iter_records_jsonl(stream, *, file):
    return records.iter_records_jsonl(stream, file=file, schemas=SCHEMAS)


def iter_records_csv(stream, *, file, kind=None):
    return records.iter_records_csv(stream, file=file, schemas=SCHEMAS, kind=kind)


JUDGING = DATA / "examples" / "judging.jsonl"


def jsonl(*objs):
    return io.BytesIO("".join(json.dumps(o) + "\n" for o in objs).encode())


def csv_bytes(text):
    return io.BytesIO(text.encode())


def test_example_jsonl_parses_every_kind():
    with JUDGING.open("rb") as fh:
        records = list(iter_records_jsonl(fh, file="judging.jsonl"))
    counts = Counter(type(r).__name__ for r in records)
    assert counts == {
        "Verdict": 36,
        "HumanLabel": 24,
        "Item": 12,
        "PairwiseVerdict": 12,
        "Criterion": 2,
    }
    faithful, clarity = records[0], records[1]
    assert isinstance(faithful, Criterion) and faithful.positive == "pass" and faithful.critical
    assert clarity.labels == ["1", "2", "3", "4", "5"] and clarity.ordinal
    verdict = next(r for r in records if isinstance(r, Verdict))
    assert verdict.judge.name == "openai/gpt-4o" and verdict.judge.temperature == 0.2
    assert verdict.explanation == "\u2026"
    pair = next(r for r in records if isinstance(r, PairwiseVerdict))
    assert pair.winner == "B" and pair.display_order == ["A", "B"]
    assert pair.judge.prompt_sha256 is None


def test_discriminated_union_adapter_and_extras_round_trip():
    obj = {
        "type": "item",
        "item_id": "x",
        "input": {"sku": 1},
        "output": "text",
        "slices": ["a"],
        "evidence": ["img/x.png"],
        "metadata": {"k": 1},
        "lang": "en",
    }
    item = RECORD_ADAPTER.validate_python(obj)
    assert isinstance(item, Item) and item.lang == "en"
    dumped = item.model_dump(mode="json")
    assert RECORD_ADAPTER.validate_python(dumped) == item
    assert dumped["lang"] == "en" and dumped["input"] == {"sku": 1}


def test_unknown_type_names_line_value_and_kinds():
    with (DATA / "bad" / "unknown-type.jsonl").open("rb") as fh, pytest.raises(FormatError) as exc:
        list(iter_records_jsonl(fh, file="unknown-type.jsonl"))
    err = exc.value
    assert (err.file, err.record, err.path) == ("unknown-type.jsonl", "line 3", "$.type")
    assert str(err) == (
        "unknown-type.jsonl, line 3, $.type: unknown type 'verdikt' (valid: "
        "item, criterion, verdict, human_label, pairwise_verdict)"
    )


@pytest.mark.parametrize(
    ("obj", "path", "reason"),
    [
        (
            {
                "type": "verdict",
                "item_id": "a",
                "criterion": "c",
                "label": "pass",
                "judge": {"provider": "openai"},
            },
            "$.judge.model",
            "Field required",
        ),
        (
            {
                "type": "verdict",
                "item_id": "a",
                "criterion": "c",
                "label": "pass",
                "confidence": 2,
                "judge": {"provider": "p", "model": "m"},
            },
            "$.confidence",
            "less than or equal to 1",
        ),
        (
            {
                "type": "verdict",
                "item_id": "a",
                "criterion": "c",
                "label": "pass",
                "sample": -1,
                "judge": {"provider": "p", "model": "m"},
            },
            "$.sample",
            "greater than or equal to 0",
        ),
        (
            {
                "type": "pairwise_verdict",
                "item_id": "a",
                "answer_a": "x",
                "answer_b": "y",
                "winner": "C",
                "judge": {"provider": "p", "model": "m"},
            },
            "$.winner",
            "'tie'",
        ),
        (
            {
                "type": "pairwise_verdict",
                "item_id": "a",
                "answer_a": "x",
                "answer_b": "y",
                "display_order": ["A", "A"],
                "winner": "A",
                "judge": {"provider": "p", "model": "m"},
            },
            "$.display_order",
            "permutation" if False else '["B", "A"]',
        ),
        (
            {"type": "criterion", "name": "c", "labels": ["pass", "fail"], "positive": "ok"},
            "$.positive",
            "'ok' is not one of the labels",
        ),
        ({"type": "criterion", "name": "c", "labels": []}, "$.labels", "at least 1 item"),
        ({"type": "item", "item_id": "a", "input": 3}, "$.input", "string or an object"),
        (
            {"type": "item", "item_id": "a", "evidence": ["ok.png", "../x.png"]},
            "$.evidence[1]",
            "escapes the bundle root",
        ),
        (
            {"type": "human_label", "item_id": "a", "criterion": "c", "label": "pass"},
            "$.rater",
            "Field required",
        ),
        ({"item_id": "a"}, "$.type", "missing type"),
        ({"type": 7}, "$.type", "unknown type 7"),
    ],
)
def test_record_errors_name_line_and_path(obj, path, reason):
    ok = {"type": "human_label", "item_id": "a", "criterion": "c", "rater": "r", "label": "x"}
    with pytest.raises(FormatError) as exc:
        list(iter_records_jsonl(jsonl(ok, obj), file="r.jsonl"))
    assert (exc.value.file, exc.value.record, exc.value.path) == ("r.jsonl", "line 2", path)
    assert reason in exc.value.reason
    assert str(exc.value).startswith(f"r.jsonl, line 2, {path}: ")


def test_numeric_labels_become_strings():
    rec = RECORD_ADAPTER.validate_python(
        {"type": "human_label", "item_id": "a", "criterion": "clarity", "rater": "r", "label": 4}
    )
    assert isinstance(rec, HumanLabel) and rec.label == "4"


VERDICTS_CSV = """\
type,item_id,criterion,label,sample,judge_provider,judge_model,judge_temperature,judge_prompt_sha256,confidence,explanation,batch
verdict,mug-000,faithful,fail,0,openai,gpt-4o,0.2,,0.77,"says ""dishwasher safe""
but the record does not",b1
verdict,mug-000,faithful,pass,1,openai,gpt-4o,0.2,,,,b1
"""


def test_verdicts_csv_with_flattened_judge():
    rows = list(iter_records_csv(csv_bytes(VERDICTS_CSV), file="verdicts.csv"))
    assert [type(r) for r in rows] == [Verdict, Verdict]
    first, second = rows
    assert first.judge.name == "openai/gpt-4o" and first.judge.temperature == 0.2
    assert first.judge.prompt_sha256 is None
    assert first.explanation == 'says "dishwasher safe"\nbut the record does not'
    assert first.batch == "b1"  # unknown columns are kept
    assert second.confidence is None and second.explanation is None  # empty cells -> None
    assert second.sample == 1


def test_csv_kind_argument_lists_and_objects():
    text = (
        "item_id,input,slices,evidence,metadata\n"
        'mug-1,"{""sku"": ""M1""}",safety | general,"[""a.png"", ""b.png""]","{""n"": 2}"\n'
        "mug-2,plain text,,,\n"
    )
    one, two = iter_records_csv(io.StringIO(text, newline=""), file="items.csv", kind="item")
    assert one.input == {"sku": "M1"} and one.slices == ["safety", "general"]
    assert one.evidence == ["a.png", "b.png"] and one.metadata == {"n": 2}
    assert two.input == "plain text" and two.slices == [] and two.metadata == {}

    crit = "name,labels,positive,ordinal,critical\nfaithful,pass|fail,pass,false,true\n"
    (c,) = iter_records_csv(csv_bytes(crit), file="c.csv", kind="criterion")
    assert c.labels == ["pass", "fail"] and c.critical is True and c.ordinal is False


def test_csv_errors_name_file_line_and_column():
    bad = VERDICTS_CSV.replace(",openai,gpt-4o,0.2,,,,b1", ",openai,,0.2,,,,b1")
    with pytest.raises(FormatError) as exc:
        list(iter_records_csv(csv_bytes(bad), file="verdicts.csv"))
    # Record 1 spans lines 2-3, so record 2 starts on line 4.
    assert str(exc.value) == "verdicts.csv, line 4, judge_model: Field required"

    with pytest.raises(FormatError, match=r"^v\.csv, line 2, confidence: .*valid number"):
        list(
            iter_records_csv(
                csv_bytes(
                    "item_id,criterion,label,judge_provider,judge_model,confidence\n"
                    "a,c,pass,p,m,high\n"
                ),
                file="v.csv",
                kind="verdict",
            )
        )
    with pytest.raises(FormatError, match=r"^v\.csv, line 1: missing column 'type'"):
        list(iter_records_csv(csv_bytes("item_id,label\na,b\n"), file="v.csv"))
    with pytest.raises(
        FormatError,
        match=r"^v\.csv, line 3, type: type 'verdict' in a file of "
        r"'human_label' records",
    ):
        list(
            iter_records_csv(
                csv_bytes(
                    "type,item_id,criterion,rater,label\nhuman_label,a,c,r,x\nverdict,a,c,r,x\n"
                ),
                file="v.csv",
            )
        )
    with pytest.raises(FormatError, match=r"^v\.csv, line 2: 3 cells but the header has 2"):
        list(iter_records_csv(csv_bytes("item_id,label\na,b,c\n"), file="v.csv", kind="item"))
    with pytest.raises(
        FormatError, match=r"^v\.csv: unknown kind 'verdicts'.*valid: item, criterion"
    ):
        list(iter_records_csv(csv_bytes("a,b\n"), file="v.csv", kind="verdicts"))
    with pytest.raises(FormatError, match=r"^v\.csv, line 2, slices: invalid JSON"):
        list(iter_records_csv(csv_bytes('item_id,slices\na,"[1"\n'), file="v.csv", kind="item"))


def test_the_pipeline_registry_holds_every_kind_once():
    assert sorted(record_schemas()) == sorted(KINDS)  # the registry lists them by name
    assert KINDS == ("item", "criterion", "verdict", "human_label", "pairwise_verdict")


class _GeneratedJsonl:
    """A binary line source made on demand (``readline`` is all the reader uses), so neither
    the test nor a buffer holds the file and tracemalloc sees only the parser."""

    line = b'{"type":"human_label","item_id":"i%d","criterion":"c","rater":"r","label":"pass"}\n'

    def __init__(self, n):
        self.n, self.i, self.bytes_read = n, 0, 0

    def readline(self, limit=-1):
        if self.i >= self.n:
            return b""
        out = self.line % self.i
        self.i += 1
        self.bytes_read += len(out)
        return out


def _reader_peak(n: int) -> int:
    """Peak traced memory of reading n generated lines (built before tracing starts)."""
    stream = io.BytesIO(b"".join(_GeneratedJsonl.line % i for i in range(n)))
    tracemalloc.start()
    try:
        count = 0
        for lineno, obj in iter_json_lines(stream, file="big.jsonl"):
            count += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == n and lineno == n and obj["item_id"] == f"i{n - 1}"
    return peak


def test_jsonl_streaming_memory_stays_flat():
    """Ten times the lines, not ten times the memory: the shared JSONL reader under tracemalloc.

    Every JSONL parser (records, reviews) is this reader plus a stateless per-line validation,
    so the reader is where memory could pile up; tracing the pydantic layer too would only
    multiply the run time (tracemalloc hooks every allocation) on shared CI cores. A reader
    that kept what it read would grow about tenfold from 5k to 50k lines.
    """
    small, large = _reader_peak(5_000), _reader_peak(50_000)
    assert large < 1.5 * small + 256 * 1024, (small, large)
    assert large < 20 * 1024 * 1024, large


def test_record_parsers_read_one_line_at_a_time():
    stream = _GeneratedJsonl(200_000)
    records = iter_records_jsonl(stream, file="big.jsonl")
    for expected_lines in (1, 2, 3):
        next(records)
        assert stream.i == expected_lines  # nothing is read ahead
    reviews = (DATA / "examples" / "reviews.jsonl").read_bytes().splitlines(keepends=True)
    source = _Lines(reviews)
    first = next(iter_review_jsonl(source, file="reviews.jsonl"))
    assert first.case_id == "statement-0912" and source.i == 1


class _Lines:
    def __init__(self, lines):
        self.lines, self.i = lines, 0

    def readline(self, limit=-1):
        if self.i >= len(self.lines):
            return b""
        self.i += 1
        return self.lines[self.i - 1]
