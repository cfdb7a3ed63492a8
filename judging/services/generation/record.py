"""What a generation knows about each case beyond its review file: whose prediction it checks
(the producer), how each reader relates to that producer, and the record it leaves on the
item's timeline (every reader's claims, the reconciliation, each prompt's SHA-256).

The review file itself stays pure FORMATS §2, so the item exports exactly like an imported one;
this record goes to an append-only `generated` event instead.
"""

from reviews.models import EventKind, Item
from reviews.selectors import item_citing, prediction_producer
from reviews.services.approval.references import latest_reference
from reviews.services.events import event_record

RELATED = ("same_model", "same_provider")
FLAGGED = "low_confidence"
FLAG_NOTE = "settled only by models of the prediction's producer family"


def known_case(project, sha256: str) -> tuple[str | None, str]:
    """(case id, producer) of the item that already holds this evidence, if exactly one does."""
    item = item_citing(project, sha256)
    return (item.external_id if item else None), prediction_producer(item)


def independence(version, producer: str) -> str:
    """A reader against the prediction's producer (`provider/model`): `same_model`,
    `same_provider` or `independent` (`unknown` when no producer is known)."""
    if not producer:
        return "unknown"
    provider, _, model = producer.partition("/")
    if (version.provider, version.model) == (provider, model):
        return "same_model"
    return "same_provider" if version.provider == provider else "independent"


def flag_related(outcome: dict, labels: dict[str, str]) -> list[str]:
    """A field agreed only by readers related to the producer goes to review all the same;
    returns the paths sent there."""
    flagged = []
    for path, (status, row) in list(outcome.items()):
        if status == "agreed" and all(labels[r] in RELATED for r in row["providers"]):
            candidate = {
                k: row[k] for k in ("expected_value", "reference_id", "evidence", "confidence")
            }
            outcome[path] = (FLAGGED, [{"provider": r, **candidate} for r in row["providers"]])
            flagged.append(path)
    return flagged


def _claims(reading) -> list[dict]:
    return [
        {"path": p, "value": c.value, "page": c.page, "quote": c.quote, "confidence": c.confidence}
        for p, c in reading.claims.items()
    ]


def generation_data(*, runs, case) -> dict:
    """The `generated` event's data for one case (JSON): `case` carries the readings (`first`,
    `second`), `outcome`, `settled_again`, `flagged`, `producer` and `labels`."""
    readers = []
    for name, (run, _) in runs.items():
        reader = {
            "name": name,
            "model": f"{run.version.provider}/{run.version.model}",
            "version": run.version.number,
            "prompt_sha256": run.version.prompt_sha256,
            # Who configured this reader (its judge version): separation of duties keeps them
            # from approving what it read (reviews/services/approval/duties.py).
            "configured_by": run.version.created_by_id,
            "independence": case.labels[name],
            "run": run.pk,
            "claims": _claims(case.first[name]),
            "error": case.first[name].error,
        }
        if name in case.second:
            reader["second_read_claims"] = _claims(case.second[name])
        readers.append(reader)
    reconciliation = {}
    for path, (status, *_) in case.outcome.items():
        if path in case.flagged:
            status = f"{FLAGGED}: {FLAG_NOTE}"
        elif status == "agreed":
            status = "agreed (second read)" if path in case.settled_again else "agreed"
        reconciliation[path] = status
    return {
        "producer": case.producer or "unknown",
        "readers": readers,
        "reconciliation": reconciliation,
    }


def generation_record(*, project, case: str, data: dict, actor) -> None:
    """Append the record to the case's timeline (a rerun that reused every read appends
    one too: the runs it names differ)."""
    item = Item.objects.get(project=project, external_id=case)
    generated = latest_reference(item, "generated")
    data = {"generated_version": generated.version if generated else None, **data}
    event_record(item=item, kind=EventKind.GENERATED, actor=actor, data=data)
