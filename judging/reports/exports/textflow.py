"""Writing TextFlow evaluated results (FORMATS §1), with the human labels added.

Items imported from TextFlow keep their flowchart key, question id, file key, variant, final
decision and unknown fields in `metadata["textflow"]`; the raw decisions are the judge's
verdicts. The export writes the same shape (keys "0"…, indent 4) plus `human_label`,
`human_raters` and `resolution` where people labelled the item.

Any other project's judge run goes out as upstream records (`export_judged.py`): the item's
input and output are the question and response, each sample's label a decisionN, the majority
the final decision, and an `evalsite` block names the criterion and judge so that importing
the file gives the same labels.
"""

from __future__ import annotations

from judging.formats.textflow import TextflowRecord, dump_textflow, normalise_verdict
from judging.models import Criterion, Verdict
from judging.reports.exports.judged import NoTextflowItems, judged_records, judged_version
from judging.selectors_labels import final_labels, rater_labels
from reviews.models import Item

CORRECTNESS = "correctness"


def _criterion_name(item: Item) -> str:
    """`correctness`, or the criterion of the Evalsite run the item was imported from."""
    return (item.metadata["textflow"].get("evalsite") or {}).get("criterion", CORRECTNESS)


def _records(project) -> tuple[list[tuple[Item, TextflowRecord]], str]:
    items = [
        i for i in Item.objects.filter(project=project).order_by("id") if "textflow" in i.metadata
    ]
    wanted = {item.pk: _criterion_name(item) for item in items}
    verdicts: dict[int, list[Verdict]] = {}
    rows = Verdict.objects.current().filter(
        item__in=items, criterion__name__in=set(wanted.values())
    )
    for verdict in rows.select_related("criterion").order_by("item_id", "sample", "judge_id"):
        if verdict.criterion.name == wanted[verdict.item_id]:
            verdicts.setdefault(verdict.item_id, []).append(verdict)
    variant = items[0].metadata["textflow"].get("variant", "upstream") if items else "upstream"
    records = []
    for item in items:
        meta = item.metadata["textflow"]
        samples = verdicts.get(item.pk, [])
        raw = [v.raw or v.label for v in samples]
        records.append(
            (
                item,
                TextflowRecord(
                    file_key=str(meta.get("file_key", item.pk)),
                    key=meta["flowchart_key"],
                    question_id=str(meta["question_id"]),
                    question=item.input or "",
                    response=item.output or "",
                    answer=item.expected if variant == "upstream" else None,
                    answers=item.expected if variant != "upstream" else None,
                    raw_decisions=raw,
                    decision_objects=[
                        {"verdict": v.raw, "explanation": v.explanation, **v.extra} for v in samples
                    ]
                    if variant != "upstream" and samples
                    else None,
                    verdicts=[normalise_verdict(r) for r in raw],
                    final_decision=meta.get("final_decision"),
                    extra=meta.get("extra") or {},
                    evalsite=meta.get("evalsite"),
                ),
            )
        )
    return records, variant


def _human(criterion: Criterion | None, pairs: list[tuple[Item, TextflowRecord]]) -> dict:
    """{record item id: the human fields} for the items people labelled on `criterion`."""
    if criterion is None:
        return {}
    final = final_labels(criterion=criterion)
    raters = rater_labels(criterion=criterion)
    human = {}
    for item, record in pairs:
        label = final.labels.get(item.pk)
        who = sorted(r for r, labels in raters.items() if item.pk in labels)
        if label is None and not who:
            continue
        human[record.item_id] = {
            "human_label": label,
            "human_raters": {r: raters[r][item.pk] for r in who} or None,
            "resolution": final.sources.get(item.pk),
        }
    return human


__all__ = ["NoTextflowItems", "textflow_export"]


def textflow_export(*, project, judge: str | None = None) -> bytes:
    """The project's TextFlow items as imported, or (with `judge` "NAME@V", or when the project
    has no TextFlow items) one judge version's verdicts."""
    if judge is None:
        pairs, variant = _records(project)
        if pairs:
            human = {}
            for name in {_criterion_name(item) for item, _ in pairs}:
                criterion = (
                    Criterion.objects.filter(project=project, name=name)
                    .order_by("-created_at")
                    .first()
                )
                mine = [(item, record) for item, record in pairs if _criterion_name(item) == name]
                human |= _human(criterion, mine)
            records = [record for _, record in pairs]
            return dump_textflow(records, variant=variant, human=human)
    version = judged_version(project, judge)
    pairs = judged_records(version)
    return dump_textflow([record for _, record in pairs], human=_human(version.criterion, pairs))
