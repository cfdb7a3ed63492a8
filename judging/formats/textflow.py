"""FORMATS §1: TextFlow evaluated results (read and write).

Two variants, detected explicitly per record and required to agree across the file:
  * ``upstream`` (TextFlow ``src/evaluation.py``): ``answer`` string; ``decision1..3`` raw
    strings, three samples of ONE judge model;
  * ``derived``: ``answers`` list of strings; ``decision1..3`` objects
    ``{"verdict": "...", "explanation": "...", ...}`` from three DIFFERENT judge models (a
    ``model``/``judge`` key in the object, when present, names it).
Decisions are optional (answers-only files are valid) but come as all three or none.

Normalised verdict: the first whitespace-separated word of the raw text, stripped of
surrounding punctuation, compared case-insensitively: ``correct`` -> ``Correct``,
``incorrect`` -> ``Incorrect``, anything else (or empty) -> ``unparsed``.

Majority rule over the RAW strings (exact comparison; derived: the ``verdict`` strings): two
or three identical -> final_decision
must equal that string; all three different -> it must equal one of them and the record is a
``three_way_split``. ``split_vote`` is True when the normalised verdicts are not all equal (so
``"Incorrect"`` vs ``"Incorrect\\n\\nbecause…"`` is not a split, ``Correct``/``unparsed`` is).

Evalsite's own runs export the upstream shape with an ``evalsite`` object on every record naming
the criterion (``criterion``, ``labels``, ``positive_label``, ``criterion_version``,
``criterion_text``) and the judge (``judge`` "provider/model", ``temperature``, ``judge_name``,
``judge_version``). Then the decisions are ``decision1..decisionN`` (N >= 1, one per sample),
each a label of the criterion, matched case-insensitively (anything else is ``unparsed``), and
the majority rule holds over N: a strict majority must be ``final_decision``.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from reviews.formats.errors import FormatError, loads_json

Variant = Literal["upstream", "derived"]
NormalisedVerdict = Literal["Correct", "Incorrect", "unparsed"]
DECISION_FIELDS = ("decision1", "decision2", "decision3")
EVALSITE = "evalsite"  # the block naming the criterion and judge of Evalsite's own runs
_DECISION = re.compile(r"^decision([1-9][0-9]*)$")
HUMAN_FIELDS = ("human_label", "human_raters", "resolution")
_KNOWN = {
    "key",
    "question_id",
    "question",
    "response",
    "answer",
    "answers",
    *DECISION_FIELDS,
    "final_decision",
    EVALSITE,
}
_VERDICTS = {"correct": "Correct", "incorrect": "Incorrect"}


def normalise_verdict(raw: str) -> NormalisedVerdict:
    words = raw.split(maxsplit=1)
    word = words[0].strip(string.punctuation).lower() if words else ""
    return _VERDICTS.get(word, "unparsed")  # type: ignore[return-value]


def majority(raw: list[str]) -> tuple[str | None, bool]:
    """``(majority string or None, no majority)`` for the raw decisions (of three: a
    three-way split); a majority is more than half of them."""
    value, count = Counter(raw).most_common(1)[0]
    return (value, False) if 2 * count > len(raw) else (None, True)


def decision_field(index: int) -> str:
    return f"decision{index + 1}"


@dataclass
class TextflowRecord:
    file_key: str  # the top-level key ("0", "1", …) as in the file
    key: str  # flowchart id; evidence image images/<key>.png or .jpeg
    question_id: str
    question: str
    response: str
    answer: str | None = None  # upstream
    answers: list[str] | None = None  # derived
    raw_decisions: list[str] = field(default_factory=list)  # [] for answers-only
    decision_objects: list[dict[str, Any]] | None = None  # derived: the full objects
    verdicts: list[str] = field(default_factory=list)  # normalised, or labels (evalsite)
    final_decision: str | None = None
    split_vote: bool = False
    three_way_split: bool = False
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, in file order
    evalsite: dict[str, Any] | None = None  # Evalsite's own run: its criterion and judge

    def label_of(self, raw: str) -> str:
        """A decision's verdict: the criterion's label it names (Evalsite's runs), else the
        first-word rule (Correct / Incorrect / unparsed)."""
        if self.evalsite is None:
            return normalise_verdict(raw)
        labels = {label.casefold(): label for label in self.evalsite["labels"]}
        return labels.get(raw.strip().casefold(), "unparsed")

    @property
    def positive(self) -> str:
        return (self.evalsite or {}).get("positive_label") or "Correct"

    @property
    def has_decisions(self) -> bool:
        return bool(self.raw_decisions)

    @property
    def item_id(self) -> str:
        """Stable item identity: ``<key>/<question_id>`` (file keys are just positions)."""
        return f"{self.key}/{self.question_id}"

    @property
    def evidence_candidates(self) -> list[str]:
        return [f"images/{self.key}.png", f"images/{self.key}.jpeg"]

    @property
    def judge_models(self) -> list[str | None]:
        """Derived variant: the model named in each decision object (None if absent)."""
        out: list[str | None] = []
        for obj in self.decision_objects or [{} for _ in self.raw_decisions]:
            name = obj.get("model") or obj.get("judge")
            out.append(name if isinstance(name, str) else None)
        return out

    @property
    def correct(self) -> bool | None:
        """TextFlow's accuracy rule: final_decision exactly "Correct" (Evalsite's runs: the
        criterion's positive label)."""
        return None if self.final_decision is None else self.final_decision == self.positive


@dataclass
class TextflowFile:
    variant: Variant
    records: list[TextflowRecord]

    @property
    def accuracy(self) -> float | None:
        judged = [r.correct for r in self.records if r.correct is not None]
        return sum(judged) / len(judged) if judged else None


def _fail(reason: str, file: str, key: str, path: str = "$") -> FormatError:
    return FormatError(reason, file=file, record=f'key "{key}"', path=path)


def _text(obj: dict[str, Any], name: str, file: str, key: str, *, coerce: bool = False) -> str:
    if name not in obj:
        raise _fail(f"missing field {name!r}", file, key, f"$.{name}")
    value = obj[name]
    if coerce and isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # some exports write question ids as numbers
    if not isinstance(value, str):
        raise _fail(f"expected a string, got {type(value).__name__}", file, key, f"$.{name}")
    return value


def _record_variant(obj: dict[str, Any], file: str, key: str) -> Variant:
    has_answer, has_answers = "answer" in obj, "answers" in obj
    kinds = {type(obj[d]).__name__ for d in DECISION_FIELDS if d in obj}
    if has_answer == has_answers:
        raise _fail("needs exactly one of 'answer' (upstream) or 'answers' (derived)", file, key)
    if has_answer and kinds - {"str"}:
        raise _fail("upstream record ('answer') needs string decisions", file, key)
    if has_answers and kinds - {"dict"}:
        raise _fail("derived record ('answers') needs decision objects", file, key)
    return "upstream" if has_answer else "derived"


def _evalsite(obj: dict[str, Any], file: str, key: str) -> dict[str, Any] | None:
    """The `evalsite` block, checked: criterion, labels (strings), judge "provider/model"."""
    if EVALSITE not in obj:
        return None
    block, path = obj[EVALSITE], f"$.{EVALSITE}"
    if not isinstance(block, dict):
        raise _fail("expected an object", file, key, path)
    if not isinstance(block.get("criterion"), str) or not block["criterion"]:
        raise _fail("expected a criterion name", file, key, f"{path}.criterion")
    labels = block.get("labels")
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
        raise _fail("expected a non-empty list of label strings", file, key, f"{path}.labels")
    judge = block.get("judge")
    if not isinstance(judge, str) or "/" not in judge.strip("/"):
        raise _fail("expected the judge as provider/model", file, key, f"{path}.judge")
    if block.get("positive_label") not in (None, "", *labels):
        raise _fail("is not one of the labels", file, key, f"{path}.positive_label")
    return block


def _decision_fields(obj: dict[str, Any], evalsite: bool, file: str, key: str) -> list[str]:
    """The record's decision fields: decision1..decision3 or none (TextFlow), decision1..N
    without a gap (Evalsite's runs, one per sample)."""
    numbers = sorted(int(m[1]) for k in obj if (m := _DECISION.match(k)))
    if not evalsite:
        numbers = [n for n in numbers if n <= 3]
        present = [decision_field(n - 1) for n in numbers]
        if present and len(present) != 3:
            missing = [d for d in DECISION_FIELDS if d not in obj]
            raise _fail(
                f"decisions come in threes; missing {missing}", file, key, f"$.{missing[0]}"
            )
        return present
    if numbers != list(range(1, len(numbers) + 1)):
        gap = next(n for n in range(1, len(numbers) + 2) if n not in numbers)
        raise _fail("decisions are numbered 1..N without a gap", file, key, f"$.decision{gap}")
    return [decision_field(n - 1) for n in numbers]


def parse_textflow_record(file_key: str, obj: Any, *, file: str) -> tuple[Variant, TextflowRecord]:
    key = file_key
    if not isinstance(obj, dict):
        raise _fail(f"expected an object, got {type(obj).__name__}", file, key)
    variant = _record_variant(obj, file, key)
    rec = TextflowRecord(
        file_key=key,
        key=_text(obj, "key", file, key),
        question_id=_text(obj, "question_id", file, key, coerce=True),
        question=_text(obj, "question", file, key),
        response=_text(obj, "response", file, key),
    )
    rec.evalsite = _evalsite(obj, file, key)
    present = _decision_fields(obj, rec.evalsite is not None, file, key)
    rec.extra = {k: v for k, v in obj.items() if k not in _KNOWN and k not in present}
    if variant == "upstream":
        rec.answer = _text(obj, "answer", file, key)
    else:
        answers = obj["answers"]
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise _fail("expected a list of strings", file, key, "$.answers")
        rec.answers = answers
    winner: str | None = None
    if present:
        winner = _read_decisions(rec, obj, present, variant, file)
    if "final_decision" in obj:
        rec.final_decision = _text(obj, "final_decision", file, key)
        _check_final_decision(rec, winner, file)
    return variant, rec


def _read_decisions(
    rec: TextflowRecord, obj: dict[str, Any], fields: list[str], variant: Variant, file: str
) -> str | None:
    """Fill in `rec`'s decisions, their verdicts and votes; returns the majority's raw
    string (None without a majority: a three-way split of three)."""
    if variant == "derived":
        rec.decision_objects = [obj[d] for d in fields]
        for d, o in zip(fields, rec.decision_objects, strict=True):
            if not isinstance(o.get("verdict"), str):
                raise _fail("missing string 'verdict'", file, rec.file_key, f"$.{d}.verdict")
        rec.raw_decisions = [o["verdict"] for o in rec.decision_objects]
    else:
        for d in fields:
            if not isinstance(obj[d], str):
                raise _fail("expected a string decision", file, rec.file_key, f"$.{d}")
        rec.raw_decisions = [obj[d] for d in fields]
    rec.verdicts = [rec.label_of(r) for r in rec.raw_decisions]
    rec.split_vote = len(set(rec.verdicts)) > 1
    winner, rec.three_way_split = majority(rec.raw_decisions)
    return winner


def _count(decisions: list[str]) -> str:
    return "three" if len(decisions) == 3 else str(len(decisions))


def _check_final_decision(rec: TextflowRecord, winner: str | None, file: str) -> None:
    """final_decision needs the three decisions and must be their majority (on a three-way
    split, one of them)."""
    final, key, path = rec.final_decision, rec.file_key, "$.final_decision"
    if not rec.has_decisions:
        raise _fail("final_decision without decision1..decision3", file, key, path)
    if winner is not None and final != winner:
        raise _fail(
            f"final_decision {final!r} is not the majority {winner!r} of the raw decisions",
            file,
            key,
            path,
        )
    if winner is None and final not in rec.raw_decisions:
        raise _fail(
            f"final_decision {final!r} is none of the {_count(rec.raw_decisions)} raw "
            "decisions (no majority)",
            file,
            key,
            path,
        )


def parse_textflow(data: bytes, *, file: str) -> TextflowFile:
    """Parse a whole evaluated-results file (keys kept in file order)."""
    top = loads_json(data, file=file)
    if not isinstance(top, dict) or not top:
        raise FormatError('expected a non-empty JSON object keyed "0", "1", …', file=file, path="$")
    variant: Variant | None = None
    records: list[TextflowRecord] = []
    seen: dict[tuple[str, str], str] = {}
    for file_key, obj in top.items():
        rec_variant, rec = parse_textflow_record(file_key, obj, file=file)
        if variant is not None and rec_variant != variant:
            raise _fail(f"a {rec_variant} record in a file of {variant} records", file, file_key)
        if records and rec.evalsite != records[0].evalsite:
            raise _fail(
                f'its "evalsite" block differs from key "{records[0].file_key}"\'s (one '
                "criterion and one judge per file)",
                file,
                file_key,
                f"$.{EVALSITE}",
            )
        variant = rec_variant
        ident = (rec.key, rec.question_id)
        if ident in seen:
            raise _fail(
                f'duplicate key/question_id {ident} (also key "{seen[ident]}")',
                file,
                file_key,
                "$.question_id",
            )
        seen[ident] = file_key
        records.append(rec)
    assert variant is not None
    return TextflowFile(variant=variant, records=records)


def record_to_dict(
    rec: TextflowRecord, variant: Variant, human: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One record in the table's field order, extras after, then human fields if given."""
    out: dict[str, Any] = {
        "key": rec.key,
        "question_id": rec.question_id,
        "question": rec.question,
        "response": rec.response,
    }
    if variant == "upstream":
        out["answer"] = rec.answer
    else:
        out["answers"] = rec.answers
    if rec.raw_decisions:
        values = rec.decision_objects if variant == "derived" else rec.raw_decisions
        out.update((decision_field(i), value) for i, value in enumerate(values))
    if rec.final_decision is not None:
        out["final_decision"] = rec.final_decision
    if rec.evalsite is not None:
        out[EVALSITE] = rec.evalsite
    out.update((k, v) for k, v in rec.extra.items() if k not in HUMAN_FIELDS)
    for name in HUMAN_FIELDS:
        value = (human or {}).get(name, rec.extra.get(name))
        if value is not None:
            out[name] = value
    return out


def dump_textflow(
    records: TextflowFile | list[TextflowRecord],
    *,
    variant: Variant = "upstream",
    human: dict[str, dict[str, Any]] | None = None,
) -> bytes:
    """Same shape back: keys "0", "1", … in order, ``indent=4`` like ``json.dump`` upstream.

    A TextflowFile brings its own variant. ``human`` maps ``item_id`` to
    ``{"human_label", "human_raters", "resolution"}`` (None values are left out).
    """
    if isinstance(records, TextflowFile):
        variant, records = records.variant, records.records
    human = human or {}
    doc = {str(i): record_to_dict(r, variant, human.get(r.item_id)) for i, r in enumerate(records)}
    return json.dumps(doc, indent=4).encode("utf-8")
