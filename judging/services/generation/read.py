"""Blind reads of evidence by ground-truth readers (judge configurations without a criterion).

A reader sees only the page images, the page text (as data), the instruction and the expected
fields, each path written out; never a prediction, never another reader's answer. The evidence's
text goes inside the <data> block: a page that says "ignore the instruction" stays data.
Every read is a fingerprinted call: a finished read is reused, never paid twice. Budgets (the
reader run's own, the project's monthly cap: budgets.py) hold as for judge runs: a reader with
a limit reads one document at a time, and a read that would pass it is not made (the run ends
`budget_reached`, the case waits for the next generation, which makes only the missing reads).
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from django.db.models import F
from django.utils import timezone

from judging.formats.replies import Claim, claims_schema, parse_claims
from judging.models import Call, CallStatus, JudgeVersion, Run, RunStatus
from judging.providers import ModelRequest, Part, Provider, ProviderError
from judging.services.runs.budgets import budget_for
from judging.services.runs.plan import fingerprint, request_record
from judging.services.runs.prices import price_in_force, usage_fields
from judging.services.runs.prompts import data_block, render_instructions
from reviews.evidence import inspect_evidence, page_words, render_page

READ_DPI = 100
MAX_PAGES = 20


@dataclass(frozen=True)
class Evidence:
    path: Path
    sha256: str
    pages: int
    media_type: str


@dataclass
class Reading:
    """One reader's claims on one case, or why there are none."""

    reader: str
    claims: dict[str, Claim]
    request: dict
    error: str = ""
    failed: bool = False  # the call failed (transport, HTTP): no reading at all, unlike "unparsed"


def evidence_of(path: Path) -> Evidence:
    info = inspect_evidence(path.read_bytes(), name=path.name)
    return Evidence(path, info.sha256, info.page_count, "image/png")


def _request(version: JudgeVersion, evidence: Evidence, paths: list[str], instruction: str):
    pages = range(1, min(evidence.pages, MAX_PAGES) + 1)
    texts = [
        {"page": p, "text": " ".join(w.text for w in page_words(evidence.path, p))} for p in pages
    ]
    data = {"expected_fields": paths, "document": evidence.path.name, "pages": texts}
    images = tuple(
        Part(
            image=render_page(evidence.path, p, dpi=READ_DPI),
            media_type="image/png",
        )
        for p in pages
    )
    system = render_instructions(
        version.prompt, {"instruction": instruction, "fields": ", ".join(paths)}
    )
    system += (
        "\nReturn one claim per expected field you find in the evidence, with its 1-based page "
        "and the words as printed; leave out a field you cannot find."
    )
    return ModelRequest(
        system=system,
        parts=(Part(text=data_block(data)), *images),
        schema=claims_schema(paths),
        temperature=version.temperature,
    )


@dataclass
class _Planned:
    key: tuple[str, str]  # (case, reader)
    run: Run
    provider: Provider
    request: ModelRequest
    record: dict
    fingerprint: str
    paths: list[str]
    outcome: object = None


def _plan(runs, jobs, paths_of) -> list[_Planned]:
    planned = []
    for case, evidence, instruction in jobs:
        paths = paths_of(case)
        if not paths:
            continue
        for name, (run, provider) in runs.items():
            request = _request(run.version, evidence, paths, instruction)
            record = request_record(request)
            key = fingerprint(run.version, 0, record)
            planned.append(_Planned((case, name), run, provider, request, record, key, paths))
    return planned


def _call(p: _Planned):
    try:
        return p.provider.complete(p.request)
    except ProviderError as exc:
        return exc


def _store(p: _Planned) -> Call:
    call = _call_row(p)
    counter = {CallStatus.DONE: "done", CallStatus.UNPARSED: "unparsed"}.get(call.status, "failed")
    Run.objects.filter(pk=p.run.pk).update(
        **{counter: F(counter) + 1},
        input_tokens=F("input_tokens") + (call.input_tokens or 0),
        output_tokens=F("output_tokens") + (call.output_tokens or 0),
        heartbeat_at=timezone.now(),
    )
    return call


def _call_row(p: _Planned) -> Call:
    reply = p.outcome
    if isinstance(reply, ProviderError):
        return Call.objects.create(
            run=p.run, fingerprint=p.fingerprint, status=CallStatus.FAILED,
            request=p.record, error=str(reply)[:2000],
        )  # fmt: skip
    parsed = parse_claims(reply.text, p.paths)
    return Call.objects.create(
        run=p.run,
        fingerprint=p.fingerprint,
        status=CallStatus.DONE if parsed.reply else CallStatus.UNPARSED,
        request=p.record,
        reply=reply.text[: 256 * 1024],
        error=parsed.error,
        attempts=reply.attempts,
        **usage_fields(price_in_force(p.run.version.provider, p.run.version.model), reply),
    )


def _count_planned(planned: list[_Planned], finished: dict) -> None:
    """Every read counted before any is made, so the progress bar moves as they finish."""
    for run in {p.run.pk: p.run for p in planned}.values():
        mine = [p for p in planned if p.run.pk == run.pk]
        Run.objects.filter(pk=run.pk).update(
            planned=F("planned") + len(mine),
            reused=F("reused") + sum(p.fingerprint in finished for p in mine),
            heartbeat_at=timezone.now(),
        )


def read_all(runs: dict[str, tuple[Run, Provider]], jobs: list[tuple], paths_of) -> dict:
    """Every (case, reader) read; {(case, reader): Reading}. HTTP in threads, writes here.
    `jobs`: (case, evidence, instruction); `paths_of(case)`: the paths to ask for."""
    planned = _plan(runs, jobs, paths_of)
    finished = {
        c.fingerprint: c
        for c in Call.objects.filter(fingerprint__in=[p.fingerprint for p in planned]).exclude(
            status=CallStatus.FAILED
        )
    }
    missing = [p for p in planned if p.fingerprint not in finished]
    _count_planned(planned, finished)
    budgets = {p.run.pk: budget_for(p.run) for p in missing}
    free = [p for p in missing if not budgets[p.run.pk].limited]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for p, outcome in zip(free, pool.map(_call, free), strict=True):
            p.outcome = outcome
            finished[p.fingerprint] = _store(p)
    refused = _read_within_budgets([p for p in missing if p not in free], finished)
    results = {}
    for p in planned:
        if p.fingerprint in refused:
            results[p.key] = Reading(p.key[1], {}, p.record, refused[p.fingerprint], True)
            continue
        call = finished[p.fingerprint]
        parsed = parse_claims(call.reply, p.paths) if call.status != CallStatus.FAILED else None
        claims = {c.path: c for c in parsed.reply.claims} if parsed and parsed.reply else {}
        failed = call.status == CallStatus.FAILED
        results[p.key] = Reading(p.key[1], claims, p.record, call.error, failed)
    return results


def _read_within_budgets(limited: list[_Planned], finished: dict) -> dict:
    """Reads of runs with a budget, one at a time; {fingerprint: why} of those not made."""
    refused = {}
    for p in limited:
        budget = budget_for(p.run)  # read now: a project's cap counts every reader's spending
        if not budget.allows(0, p.request):
            refused[p.fingerprint] = budget.reason()
            Run.objects.filter(pk=p.run.pk).update(
                status=RunStatus.BUDGET_REACHED, error=budget.reason()
            )
            continue
        p.outcome = _call(p)
        finished[p.fingerprint] = _store(p)
    return refused


def case_id(evidence: Evidence) -> str:
    return f"{evidence.path.stem}-{evidence.sha256[:8]}"
