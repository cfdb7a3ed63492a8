"""Model replies (FORMATS §6): the JSON a judge or a ground-truth reader must return.

Each kind has a pydantic model (parsing) and a JSON Schema (asked for as structured output).
The schemas ask for every key so strict structured-output modes accept them; the parsers accept
the optional keys missing. A reply that is not one of these is `unparsed`: the caller keeps the
raw text, never a guess.
"""

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

UNPARSED = "unparsed"


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class CriterionReply(_Reply):
    label: str
    confidence: float | None = Field(default=None, ge=0, le=1)
    explanation: str = ""


class PairwiseReply(_Reply):
    winner: Literal["first", "second", "tie"]
    confidence: float | None = Field(default=None, ge=0, le=1)
    explanation: str = ""


class Claim(_Reply):
    path: str = Field(min_length=1)
    value: Any
    page: int | None = Field(default=None, ge=1)
    quote: str = ""
    confidence: float | None = Field(default=None, ge=0, le=1)


class ClaimsReply(_Reply):
    claims: list[Claim]


@dataclass(frozen=True)
class Parsed:
    """A reply parsed, or `reply is None` with the reason it did not parse."""

    reply: _Reply | None
    error: str = ""


def _object(properties: dict, name: str) -> dict:
    return {
        "name": name,
        "schema": {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        },
    }


_CONFIDENCE = {"type": "number", "minimum": 0, "maximum": 1}
_EXPLANATION = {"type": "string"}


def criterion_schema(labels: list[str]) -> dict:
    return _object(
        {
            "label": {"type": "string", "enum": [str(label) for label in labels]},
            "confidence": _CONFIDENCE,
            "explanation": _EXPLANATION,
        },
        "criterion_verdict",
    )


def pairwise_schema() -> dict:
    return _object(
        {
            "winner": {"type": "string", "enum": ["first", "second", "tie"]},
            "confidence": _CONFIDENCE,
            "explanation": _EXPLANATION,
        },
        "pairwise_verdict",
    )


def claims_schema(paths: list[str]) -> dict:
    claim = _object(
        {
            "path": {"type": "string", "enum": list(paths)},
            "value": {"type": "string"},
            "page": {"type": "integer"},
            "quote": {"type": "string"},
            "confidence": _CONFIDENCE,
        },
        "claim",
    )["schema"]
    return _object({"claims": {"type": "array", "items": claim}}, "evidence_claims")


def first_json_object(text: str) -> Any:
    """The whole text as JSON, else the first JSON object in it (a model may wrap it in prose or a
    code fence). Raises ValueError when there is none."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            return decoder.raw_decode(text, start)[0]
        except ValueError:
            start = text.find("{", start + 1)
    raise ValueError("no JSON object in the reply")


def _validate(model: type[_Reply], text: str) -> Parsed:
    try:
        data = first_json_object(text)
    except ValueError as exc:
        return Parsed(None, str(exc))
    try:
        return Parsed(model.model_validate(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        return Parsed(None, f"{where}: {first['msg']}")


def parse_criterion(text: str, labels: list[str]) -> Parsed:
    parsed = _validate(CriterionReply, text)
    if parsed.reply is None:
        return parsed
    wanted = {str(label).casefold(): str(label) for label in labels}
    label = wanted.get(parsed.reply.label.strip().casefold())
    if label is None:
        return Parsed(None, f"label: {parsed.reply.label!r} is not one of {list(wanted.values())}")
    return Parsed(parsed.reply.model_copy(update={"label": label}))


def parse_pairwise(text: str) -> Parsed:
    return _validate(PairwiseReply, text)


def parse_claims(text: str, paths: list[str]) -> Parsed:
    """Claims for paths that were not asked for are dropped (a reader answers what it is asked);
    the first claim per path counts."""
    parsed = _validate(ClaimsReply, text)
    if parsed.reply is None:
        return parsed
    kept, seen = [], set()
    for claim in parsed.reply.claims:
        if claim.path in paths and claim.path not in seen:
            seen.add(claim.path)
            kept.append(claim)
    return Parsed(ClaimsReply(claims=kept))


# --- claim decisions (semantic scoring, docs/scoring.md "Semantic comparison") --------------

PREDICTED_DECISIONS = ("supported", "contradicted", "undecidable")
REFERENCE_DECISIONS = ("matched", "missed", "undecidable")
UNDECIDABLE = "undecidable"


class PredictedDecision(_Reply):
    id: str
    decision: Literal["supported", "contradicted", "undecidable"]
    explanation: str = ""


class ReferenceDecision(_Reply):
    id: str
    decision: Literal["matched", "missed", "undecidable"]
    explanation: str = ""
    text: str = ""  # evidence only: the claim the judge read in the evidence


class ClaimDecisionsReply(_Reply):
    predicted: list[PredictedDecision]
    reference: list[ReferenceDecision]


def claim_decisions_schema(predicted_ids: list[str], reference_ids: list[str] | None) -> dict:
    """`reference_ids` None: no reference, the judge lists the evidence's claims itself (each
    with its `text`, ids of its own)."""

    def decisions(ids, choices: tuple[str, ...], name: str, **more) -> dict:
        item = _object(
            {
                "id": {"type": "string"}
                if ids is None
                else {"type": "string", "enum": ids or [""]},
                **more,
                "decision": {"type": "string", "enum": list(choices)},
                "explanation": _EXPLANATION,
            },
            name,
        )["schema"]
        return {"type": "array", "items": item}

    text = {"text": {"type": "string"}} if reference_ids is None else {}
    return _object(
        {
            "predicted": decisions(predicted_ids, PREDICTED_DECISIONS, "predicted_decision"),
            "reference": decisions(
                reference_ids, REFERENCE_DECISIONS, "reference_decision", **text
            ),
        },
        "claim_decisions",
    )


def parse_evidence_decisions(
    text: str, predicted_ids: list[str]
) -> tuple[dict[str, tuple[str, str]], list[dict], str]:
    """No reference (the judge read the evidence): (decisions of the predicted claims and of
    the evidence claims, the evidence claims `{"id": "e1", "text"}` in the reply's order, error).
    Evidence claims without text are dropped; they are numbered e1, e2, … whatever ids the
    reply gave them."""
    parsed = _validate(ClaimDecisionsReply, text)
    if parsed.reply is None:
        reason = f"reply not understood: {parsed.error}"
        return {claim: (UNDECIDABLE, reason) for claim in predicted_ids}, [], parsed.error
    decisions, _ = parse_claim_decisions(text, predicted_ids, [])
    claims = []
    for given in parsed.reply.reference:
        if given.text.strip():
            claim = {"id": f"e{len(claims) + 1}", "text": given.text.strip()}
            claims.append(claim)
            decisions[claim["id"]] = (given.decision, given.explanation)
    return decisions, claims, ""


def parse_claim_decisions(
    text: str, predicted_ids: list[str], reference_ids: list[str]
) -> tuple[dict[str, tuple[str, str]], str]:
    """({claim id: (decision, explanation)} for every id asked, error). A reply that does not
    validate leaves every claim `undecidable` with the error (never a crash, never a guess); an
    id the reply skips is `undecidable` ("no decision"); ids not asked are dropped; the first
    decision per id counts."""
    asked = [*predicted_ids, *reference_ids]
    parsed = _validate(ClaimDecisionsReply, text)
    if parsed.reply is None:
        reason = f"reply not understood: {parsed.error}"
        return {claim: (UNDECIDABLE, reason) for claim in asked}, parsed.error
    found: dict[str, tuple[str, str]] = {}
    for wanted, given in (
        (set(predicted_ids), parsed.reply.predicted),
        (set(reference_ids), parsed.reply.reference),
    ):
        for decision in given:
            if decision.id in wanted and decision.id not in found:
                found[decision.id] = (decision.decision, decision.explanation)
    return {claim: found.get(claim, (UNDECIDABLE, "no decision")) for claim in asked}, ""
