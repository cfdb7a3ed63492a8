"""The claim judge: a judge configuration without a criterion that, for one record, gets the
prediction's claims and the reference's and decides each (docs/formats.md §6, "Claim
decisions"). Its calls are a run of its version like any judge's: fingerprinted (a decision
already made is reused, never paid twice), priced at the price in force, counted on the run.

A reply that does not validate leaves that record's claims `undecidable` with the reason; a call
that fails (HTTP, timeout) leaves them undecidable too, and a later scoring asks again.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from django.db.models import F
from django.utils import timezone

from judging.formats.replies import (
    claim_decisions_schema,
    parse_claim_decisions,
    parse_evidence_decisions,
)
from judging.models import Call, CallStatus, JudgeConfig, Run, RunStatus
from judging.providers import ModelRequest, Part, ProviderError
from judging.reports.scoring.claims import ClaimOutcome, ClaimTask
from judging.services.judges.configs import JudgeConfigError, version_get
from judging.services.judges.refs import VERSIONED
from judging.services.runs.plan import fingerprint, request_record
from judging.services.runs.prices import price_in_force, usage_fields
from judging.services.runs.prompts import data_block, render_instructions
from judging.services.runs.runner import provider_for
from reviews.evidence import render_page
from reviews.models import Document
from reviews.services.files.stored import path_or_bytes

INSTRUCTION = (
    "\nDecide each predicted claim against the reference claims: `supported` (the reference "
    "says it), `contradicted` (the reference says otherwise) or `undecidable` (the reference "
    "does not say). Decide each reference claim against the predicted claims: `matched` (the "
    "prediction states it), `missed` (it does not) or `undecidable`. Judge meaning, not "
    "wording. One decision per claim id, with a short explanation."
)

EVIDENCE_INSTRUCTION = (
    "\nThere is no written reference: the evidence pages, shown as images, are the reference. "
    "Decide each predicted claim against them: `supported`, `contradicted` or `undecidable`. "
    "Then list as reference claims the facts on the pages that a complete answer would state, "
    "one per entry with its `text`, each decided `matched` (the predicted claims state it), "
    "`missed` or `undecidable`. Judge meaning, not wording."
)
EVIDENCE_NOTE = "the reference is the evidence pages that follow as images"
READ_DPI = 100
MAX_PAGES = 20


class ClaimJudgeError(ValueError):
    """The claim judge named cannot be used; the message says why."""


def claim_judge_version(project, name: str):
    """`NAME` (its latest version) or `NAME@V`: a judge configuration without a criterion."""
    match = VERSIONED.match(name or "")
    config_name, number = (match["name"], int(match["number"])) if match else (name, None)
    config = JudgeConfig.objects.filter(project=project, name=config_name).first()
    if config is None:
        raise ClaimJudgeError(f"--claim-judge {name!r}: no judge configuration of that name")
    try:
        version = version_get(config, number)
    except JudgeConfigError as exc:
        raise ClaimJudgeError(f"--claim-judge {name!r}: {exc}") from None
    if version.criterion_id is not None:
        raise ClaimJudgeError(
            f"--claim-judge {name!r} judges criterion {version.criterion.name!r}; a claim "
            "judge has none"
        )
    return version


def _pages(evidence: tuple) -> tuple[Part, ...]:
    """The evidence pages as PNG images, in order (at most MAX_PAGES)."""
    documents = Document.objects.in_bulk({doc for doc, _ in evidence})
    parts = []
    for doc, page in evidence[:MAX_PAGES]:
        document = documents[doc]
        source = path_or_bytes(document.file)
        image = render_page(source, page, dpi=READ_DPI, name=document.original_name or None)
        parts.append(Part(image=image, media_type="image/png"))
    return tuple(parts)


def _request(version, task: ClaimTask) -> ModelRequest:
    predicted_ids, reference_ids = task.ids()
    data = {"predicted_claims": task.predicted, "reference_claims": task.reference}
    rules, images = INSTRUCTION, ()
    if task.evidence:  # no reference: the evidence pages are the reference
        data = {"predicted_claims": task.predicted, "evidence": EVIDENCE_NOTE}
        rules, images, reference_ids = EVIDENCE_INSTRUCTION, _pages(task.evidence), None
    return ModelRequest(
        system=render_instructions(version.prompt, {"instruction": "Decide the claims."}) + rules,
        parts=(Part(text=data_block(data)), *images),
        schema=claim_decisions_schema(predicted_ids, reference_ids),
        temperature=version.temperature,
        max_output_tokens=4096,
    )


def _call(job):
    provider, request = job
    try:
        return provider.complete(request)
    except ProviderError as exc:
        return exc


def _store(run: Run, key: str, record: dict, reply, task: ClaimTask) -> Call:
    if isinstance(reply, ProviderError):
        call = Call.objects.create(
            run=run, fingerprint=key, status=CallStatus.FAILED, request=record,
            error=str(reply)[:2000],
        )  # fmt: skip
    else:
        _, _, error = _parse(reply.text, task)
        call = Call.objects.create(
            run=run,
            fingerprint=key,
            status=CallStatus.UNPARSED if error else CallStatus.DONE,
            request=record,
            reply=reply.text[: 256 * 1024],
            error=error,
            attempts=reply.attempts,
            **usage_fields(price_in_force(run.version.provider, run.version.model), reply),
        )
    counter = {CallStatus.DONE: "done", CallStatus.UNPARSED: "unparsed"}.get(call.status, "failed")
    Run.objects.filter(pk=run.pk).update(
        **{counter: F(counter) + 1},
        input_tokens=F("input_tokens") + (call.input_tokens or 0),
        output_tokens=F("output_tokens") + (call.output_tokens or 0),
        heartbeat_at=timezone.now(),
    )
    return call


def _parse(text: str, task: ClaimTask) -> tuple[dict, tuple, str]:
    """(decisions, the claims read in the evidence, error) of a reply to `task`."""
    if task.evidence:
        decisions, claims, error = parse_evidence_decisions(text, task.ids()[0])
        return decisions, tuple(claims), error
    decisions, error = parse_claim_decisions(text, *task.ids())
    return decisions, (), error


def _outcome(version, call: Call, task: ClaimTask) -> ClaimOutcome:
    if call.status == CallStatus.FAILED:
        reason = f"the claim judge's call failed: {call.error}"
        decisions = {claim: ("undecidable", reason) for ids in task.ids() for claim in ids}
        return ClaimOutcome(version.ref, decisions, call.fingerprint, reason)
    decisions, claims, error = _parse(call.reply, task)
    return ClaimOutcome(version.ref, decisions, call.fingerprint, error, claims)


def claims_judge(*, project, version, tasks: list[ClaimTask], actor=None) -> dict:
    """{task key: ClaimOutcome}: one run of `version` over `tasks`, finished calls reused."""
    run = Run.objects.create(
        project=project, version=version, split="all", confirmed_held_out=False,
        created_by=actor if getattr(actor, "pk", None) else None,
    )  # fmt: skip
    try:
        provider = provider_for(run)
    except ProviderError as exc:
        Run.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, error=str(exc)[:2000])
        raise ClaimJudgeError(f"--claim-judge {version.ref}: {exc}") from None
    planned = []
    for task in tasks:
        request = _request(version, task)
        record = request_record(request)
        planned.append((task, request, record, fingerprint(version, 0, record)))
    finished = {
        c.fingerprint: c
        for c in Call.objects.filter(fingerprint__in=[p[3] for p in planned]).exclude(
            status=CallStatus.FAILED
        )
    }
    missing = list({p[3]: p for p in planned if p[3] not in finished}.values())  # once each
    Run.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, started_at=timezone.now(), planned=len(planned),
        reused=len(planned) - len(missing),
    )  # fmt: skip
    status, error = RunStatus.FAILED, "scoring stopped"  # unless the calls below all return
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            replies = pool.map(_call, [(provider, p[1]) for p in missing])
            for (task, _, record, key), reply in zip(missing, replies, strict=True):
                finished[key] = _store(run, key, record, reply, task)
        status, error = RunStatus.DONE, ""
    finally:
        provider.close()
        Run.objects.filter(pk=run.pk).update(status=status, error=error, finished_at=timezone.now())
    return {task.key: _outcome(version, finished[key], task) for task, _, _, key in planned}
