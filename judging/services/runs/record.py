"""Writing finished calls: a Call row per call and, for judges, the Verdict an import would write.

Both record the item revision the request showed. Results are written in small batches, one
transaction each, by the runner's main thread."""

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from judging.formats.replies import UNPARSED, parse_criterion, parse_pairwise
from judging.models import Call, CallStatus, JudgeVersion, Run, Verdict
from judging.providers import ModelReply, ProviderError
from judging.services.runs.plan import PlannedCall
from judging.services.runs.prices import price_in_force, usage_fields
from reviews.services.projects.data import project_data_touch

RAW_CHARS = 256 * 1024
CUT_NOTE = "\n[cut: the reply was longer]"


@dataclass
class Outcome:
    planned: PlannedCall
    reply: ModelReply | None = None
    error: ProviderError | None = None


def _raw(reply: ModelReply) -> str:
    cut = reply.truncated or len(reply.text) > RAW_CHARS
    return reply.text[:RAW_CHARS] + (CUT_NOTE if cut else "")


def _label(version: JudgeVersion, planned: PlannedCall, reply: ModelReply) -> tuple:
    """(label, confidence, explanation, parse error) as a Verdict stores them."""
    criterion = version.criterion
    if reply.truncated:
        return UNPARSED, None, "", "the reply was larger than the provider's cap"
    if not criterion.pairwise:
        parsed = parse_criterion(reply.text, list(criterion.labels))
        if parsed.reply is None:
            return UNPARSED, None, "", parsed.error
        return parsed.reply.label, parsed.reply.confidence, parsed.reply.explanation, ""
    parsed = parse_pairwise(reply.text)
    if parsed.reply is None:
        return UNPARSED, None, "", parsed.error
    order = planned.display_order
    winner = {"first": order[0], "second": order[1], "tie": "tie"}[parsed.reply.winner]
    labels = {str(label).casefold(): str(label) for label in criterion.labels}
    label = labels.get(winner.casefold(), winner)
    return label, parsed.reply.confidence, parsed.reply.explanation, ""


def _call(run: Run, outcome: Outcome, status: str, **fields) -> Call:
    planned = outcome.planned
    return Call(
        run=run,
        item_id=planned.item_id,
        revision=planned.revision,
        fingerprint=planned.fingerprint,
        sample=planned.sample,
        display_order=planned.display_order,
        status=status,
        request=planned.record,
        **fields,
    )


def _one(run: Run, version: JudgeVersion, outcome: Outcome, price) -> tuple[str, int, int]:
    """Write one outcome, its cost at `price` (the price in force); (status, input tokens,
    output tokens)."""
    if outcome.error is not None:
        _call(run, outcome, CallStatus.FAILED, error=str(outcome.error)[:2000]).save()
        return CallStatus.FAILED, 0, 0
    reply, planned = outcome.reply, outcome.planned
    label, confidence, explanation, error = _label(version, planned, reply)
    status = CallStatus.UNPARSED if label == UNPARSED else CallStatus.DONE
    raw = _raw(reply)
    try:
        with transaction.atomic():
            _call(
                run,
                outcome,
                status,
                reply=raw,
                error=error,
                attempts=reply.attempts,
                **usage_fields(price, reply),
            ).save()
    except IntegrityError:  # another run finished the same call first: keep theirs
        return "reused", 0, 0
    _verdict_latest_wins(_verdict(run, version, planned, label, raw, explanation, confidence))
    return status, reply.input_tokens or 0, reply.output_tokens or 0


def _verdict(run, version, planned, label, raw, explanation, confidence) -> Verdict:
    return Verdict(
        item_id=planned.item_id,
        revision=planned.revision,
        criterion=version.criterion,
        judge=version.judge,
        sample=planned.sample,
        label=label,
        raw=raw,
        explanation=explanation,
        confidence=confidence,
        display_order=planned.display_order,
        extra={"run": run.pk, "version": version.number},
        source_name=f"run {run.pk} ({version})",
    )


_REPLACED = ("label", "raw", "explanation", "confidence", "extra", "source_name")


def _verdict_latest_wins(verdict: Verdict) -> None:
    """Store the run's verdict. The same sample on the same revision from this judge
    configuration (an earlier run or import under the same provider, model, temperature and
    prompt) is replaced: the newest reply counts. What it said stays in its own Call row or
    file, and in the new verdict's `extra.replaced`."""
    earlier = Verdict.objects.filter(
        item_id=verdict.item_id,
        revision=verdict.revision,
        criterion=verdict.criterion,
        judge=verdict.judge,
        sample=verdict.sample,
        display_order=verdict.display_order,
    ).first()
    if earlier is None:
        verdict.save()
        return
    verdict.extra["replaced"] = {"label": earlier.label, "source_name": earlier.source_name}
    for name in _REPLACED:
        setattr(earlier, name, getattr(verdict, name))
    earlier.save(update_fields=[*_REPLACED])


def _verdicts_latest_win(verdicts: list[Verdict]) -> None:
    """`_verdict_latest_wins` for one flush's verdicts (one judge, one criterion) in three
    statements: the earlier verdicts of those items, then one insert and one update."""
    if not verdicts:
        return

    def key(v):
        return (v.item_id, v.revision, v.sample, v.display_order)

    first = verdicts[0]
    earlier = {
        key(e): e
        for e in Verdict.objects.filter(
            item_id__in={v.item_id for v in verdicts},
            criterion=first.criterion,
            judge=first.judge,
        ).order_by()
    }
    new, replaced = [], []
    for verdict in verdicts:
        old = earlier.get(key(verdict))
        if old is None:
            new.append(verdict)
            continue
        verdict.extra["replaced"] = {"label": old.label, "source_name": old.source_name}
        for name in _REPLACED:
            setattr(old, name, getattr(verdict, name))
        replaced.append(old)
    Verdict.objects.bulk_create(new)
    Verdict.objects.bulk_update(replaced, list(_REPLACED))


def _outcomes_batched(run: Run, version: JudgeVersion, outcomes: list[Outcome], price, counts):
    """The outcomes' Call rows and verdicts in a few statements (the calls finished by another
    run before are counted `reused`); (input tokens, output tokens). Raises IntegrityError if
    another run finished one of these calls meanwhile (the caller then writes them one by
    one)."""
    fingerprints = [o.planned.fingerprint for o in outcomes if o.error is None]
    finished = set(
        Call.objects.filter(fingerprint__in=fingerprints)
        .exclude(status=CallStatus.FAILED)
        .values_list("fingerprint", flat=True)
    )
    calls, verdicts, tokens_in, tokens_out = [], [], 0, 0
    for outcome in outcomes:
        planned, reply = outcome.planned, outcome.reply
        if outcome.error is not None:
            calls.append(_call(run, outcome, CallStatus.FAILED, error=str(outcome.error)[:2000]))
            counts[CallStatus.FAILED] += 1
            continue
        if planned.fingerprint in finished:
            counts["reused"] += 1
            continue
        finished.add(planned.fingerprint)
        label, confidence, explanation, error = _label(version, planned, reply)
        status = CallStatus.UNPARSED if label == UNPARSED else CallStatus.DONE
        raw = _raw(reply)
        calls.append(_call(run, outcome, status, reply=raw, error=error, attempts=reply.attempts,
                           **usage_fields(price, reply)))  # fmt: skip
        verdicts.append(_verdict(run, version, planned, label, raw, explanation, confidence))
        counts[status] += 1
        tokens_in += reply.input_tokens or 0
        tokens_out += reply.output_tokens or 0
    with transaction.atomic():
        Call.objects.bulk_create(calls)
    _verdicts_latest_win(verdicts)
    return tokens_in, tokens_out


@transaction.atomic
def record_outcomes(run: Run, version: JudgeVersion, outcomes: list[Outcome]) -> None:
    """One flush of the runner: its calls and verdicts in a few statements; if another run
    finished one of the same calls meanwhile, one by one (`_one`), keeping theirs."""
    counts = {"done": 0, "unparsed": 0, "failed": 0, "reused": 0}
    price = price_in_force(version.provider, version.model) if outcomes else None
    try:
        with transaction.atomic():
            tokens_in, tokens_out = _outcomes_batched(run, version, outcomes, price, counts)
    except IntegrityError:
        counts = dict.fromkeys(counts, 0)
        tokens_in = tokens_out = 0
        for outcome in outcomes:
            status, t_in, t_out = _one(run, version, outcome, price)
            counts[status] += 1
            tokens_in += t_in
            tokens_out += t_out
    Run.objects.filter(pk=run.pk).update(
        done=F("done") + counts["done"],
        unparsed=F("unparsed") + counts["unparsed"],
        failed=F("failed") + counts["failed"],
        reused=F("reused") + counts["reused"],
        input_tokens=F("input_tokens") + tokens_in,
        output_tokens=F("output_tokens") + tokens_out,
        heartbeat_at=timezone.now(),
    )
    project_data_touch(run.project_id)  # the flush's verdicts, new or replaced (last: a lock)
