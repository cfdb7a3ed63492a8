"""Judging's row kinds for reviews' row exports: model calls, judge verdicts, human labels.

Registered from `judging/apps.py`. Each row names what it measured: the item's revision, the
criterion's version, the judge (provider, model, temperature, prompt SHA-256) or the judge
version and the price in force for a call. These rows hold held-out items too, so an export
records a look at them (`HeldOutAccess`) once a split is drawn, as the agreement report does.
"""

from __future__ import annotations

from judging.models import Call, HumanLabel, Verdict
from judging.services.calibration.splits import current_draw, held_out_access_log
from reviews.formats.rows import Column as _C
from reviews.selectors_rows import RowKind, row_kind_add

CALLS = [
    _C("call_id", "int"),
    _C("run_id", "int"),
    _C("judge_version", "text", "NAME@VERSION"),
    _C("provider", "text"),
    _C("model", "text"),
    _C("item_id", "text", "empty: a blind read made before its item existed"),
    _C("item_revision", "int"),
    _C("sample", "int"),
    _C("display_order", "text", "pairwise: AB or BA"),
    _C("status", "text", "done, unparsed, failed"),
    _C("reply", "text", "the model's raw text"),
    _C("error", "text"),
    _C("input_tokens", "int"),
    _C("output_tokens", "int"),
    _C("attempts", "int"),
    _C("latency_ms", "int"),
    _C("price_id", "int", "the model price in force when the call was made"),
    _C("cost_usd", "float", "fixed at call time from that price"),
    _C("fingerprint", "text"),
    _C("created_at", "time"),
]
VERDICTS = [
    _C("verdict_id", "int"),
    _C("item_id", "text"),
    _C("item_revision", "int", "the item's revision the judge saw"),
    _C("criterion", "text"),
    _C("criterion_version", "text"),
    _C("judge", "text", "provider/model"),
    _C("temperature", "float"),
    _C("prompt_sha256", "text"),
    _C("sample", "int"),
    _C("label", "text", "`unparsed` when the reply gave none"),
    _C("confidence", "float"),
    _C("explanation", "text"),
    _C("display_order", "text"),
    _C("source_name", "text", "the imported file, or the run"),
    _C("created_at", "time"),
]
LABELS = [
    _C("label_id", "int"),
    _C("item_id", "text"),
    _C("item_revision", "int", "the item's revision the rater saw"),
    _C("criterion", "text"),
    _C("criterion_version", "text"),
    _C("rater", "text", "the rater's name in the source file"),
    _C("label", "text"),
    _C("note", "text"),
    _C("source_name", "text"),
    _C("created_at", "time"),
]


def _named_version(project, rows):
    """run_id, then NAME@VERSION for the judge configuration's name in the next column."""
    numbers = dict(
        Call.objects.filter(run__project=project)
        .values_list("run_id", "run__version__number")
        .distinct()
    )  # one small query: each run's version number
    for row in rows:
        yield (*row[:2], f"{row[2]}@{numbers[row[1]]}", *row[3:])


def _provider_model(project, rows):
    """provider and model (columns 5 and 6 as read) joined as one column, provider/model."""
    for row in rows:
        yield (*row[:5], f"{row[5]}/{row[6]}", *row[7:])


def _held_out_look(*, actor, project, kind: str) -> None:
    if current_draw(project) is not None:
        held_out_access_log(actor=actor, project=project, what=f"row export ({kind})")


def register() -> None:
    row_kind_add(RowKind(
        "calls", "every model call of the project's runs", CALLS,
        query=lambda project: Call.objects.filter(run__project=project),
        fields=["pk", "run_id", "run__version__config__name", "run__version__provider",
                "run__version__model", "item__external_id", "revision", "sample",
                "display_order", "status", "reply", "error", "input_tokens", "output_tokens",
                "attempts", "latency_ms", "price_id", "cost_usd", "fingerprint", "created_at"],
        shape=_named_version, on_export=_held_out_look,
    ))  # fmt: skip
    row_kind_add(RowKind(
        "verdicts", "every judge verdict, each sample a row", VERDICTS,
        query=lambda project: Verdict.objects.filter(item__project=project),
        fields=["pk", "item__external_id", "revision", "criterion__name", "criterion__version",
                "judge__provider", "judge__model", "judge__temperature", "judge__prompt_sha256",
                "sample", "label", "confidence", "explanation", "display_order", "source_name",
                "created_at"],
        shape=_provider_model, on_export=_held_out_look,
    ))  # fmt: skip
    row_kind_add(RowKind(
        "labels", "every human label by criterion", LABELS,
        query=lambda project: HumanLabel.objects.filter(item__project=project),
        fields=["pk", "item__external_id", "revision", "criterion__name", "criterion__version",
                "rater", "label", "note", "source_name", "created_at"],
        on_export=_held_out_look,
    ))  # fmt: skip
