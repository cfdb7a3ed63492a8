"""What an imported *approved* record may do: the one policy for the CLI, the upload and the API.

An approved file becomes ground truth only when its format-3 (or format-2) signature verifies
against a key the project trusts (this site's key, or one an admin-and-approver registered:
`TrustedKey`) by the check `verify_approval` makes too (signature_check.py: algorithm, digest,
signed fields and, for format 3, the evidence the file cites), the signature binds this project
and this case, and its version is newer than the current ground
truth (never a rollback). The same signed version again is a no-op. Anything else is refused
with the reason, unless the importer chose `--as-generated`: then the rows come in as a
`generated` reference and the item goes through review and approval here again.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from django.db import transaction

from reviews.access import roles_of
from reviews.formats.signed import payload_format, signed_fields
from reviews.models import Item, KeyRevocation, Project, ProjectAction, Role, TrustedKey
from reviews.reports.verification_files import csv_approvals, signatures_of
from reviews.services.approval import signing
from reviews.services.approval.ground_truth import signed_version
from reviews.services.approval.references import current_ground_truth
from reviews.services.approval.signature_check import signature_problem
from reviews.services.projects.audit import project_event_record


class Outcome(StrEnum):
    ACCEPT = "accept"  # write it as the new ground truth
    SAME = "same"  # this exact signed version is the current one: nothing to do
    REFUSE = "refuse"


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    reason: str = ""
    signer: str = ""  # "key <id> (<label>, registered by <user>)" when the key was trusted


def trusted_keys(project: Project) -> dict[str, tuple[object, str]]:
    """key id -> (public key, who it is): this site's key and the project's registered ones."""
    site = signing.load_or_create_private_key().public_key()
    keys = {signing.key_id_of(site): (site, "this site's key")}
    registered = TrustedKey.objects.filter(project=project, revocation__isnull=True)
    for row in registered.select_related("registered_by"):
        who = f"{row.label or 'registered key'}, registered by {row.registered_by}"
        keys[row.key_id] = (signing.load_public_key(row.public_key_pem.encode()), who)
    return keys


def _refuse(reason: str) -> Decision:
    return Decision(Outcome.REFUSE, reason)


def approved_record_decision(
    *,
    project: Project,
    item: Item | None,
    case_id: str,
    rows,
    block: dict | None,
    claims: dict,
    citations: list[dict] | None = None,
) -> Decision:
    """May this approved record (its `rows` and `approval` block) become ground truth?

    `claims` are the file's own statements outside the approval block (`approved_by`,
    `approved_at`, ...) that must agree with what was signed; `citations` the evidence it
    gives its rows (a review file), which a format-3 signature binds.
    """
    if not block:
        return _refuse("it is marked approved but carries no signature")
    if payload_format(block) == 1:
        return _refuse("its signature is format 1 (rows only, not bound to the case)")
    missing = [name for name in signed_fields(block) if name not in block]
    if missing:
        return _refuse(f"its approval lacks {', '.join(missing)}")
    keys = trusted_keys(project)
    if block.get("key_id") not in keys:
        if revoked := KeyRevocation.objects.filter(
            key__project=project, key__key_id=block.get("key_id")
        ).first():
            return _refuse(
                f"it is signed by key {revoked.key.key_id}, which this project revoked on "
                f"{revoked.revoked_at:%Y-%m-%d} ({revoked.reason})"
            )
        return _refuse(
            f"it is signed by key {block.get('key_id')!r}, which this project does not trust "
            "(a project admin who is also an approver can register it: manage.py trust_key)"
        )
    public_key, who = keys[block["key_id"]]
    problem = signature_problem(block, rows, public_key, citations=citations)
    if problem:
        return _refuse(
            f"its signature does not verify with key {block['key_id']} ({who}): {problem}"
        )
    if block["project"] != project.slug:
        return _refuse(f"it was signed for project {block['project']!r}, not {project.slug!r}")
    if block["case_id"] != case_id:
        return _refuse(f"it was signed for case {block['case_id']!r}, not {case_id!r}")
    for name, value in claims.items():
        if value is not None and value != block.get(name):
            return _refuse(f"its {name} {value!r} is not the signed {block.get(name)!r}")
    signer = f"key {block['key_id']} ({who})"
    current = current_ground_truth(item) if item is not None else None
    version = signed_version(current)
    if version is not None:
        if block["version"] == version and current.sha256 == block["sha256"]:
            return Decision(Outcome.SAME, signer=signer)
        if not isinstance(block["version"], int) or block["version"] <= version:
            return _refuse(
                f"it is version {block['version']}, not newer than the current ground truth "
                f"(version {version}): importing it would roll the approval back"
            )
    return Decision(Outcome.ACCEPT, signer=signer)


def csv_signature_notes(path: Path, *, project: Project, name: str) -> list[str]:
    """A §3 CSV imports as generated rows, never as ground truth; but with an export's
    signature file beside it (`<name>.sig.json`), say per case whether its signature verifies
    with a key this project trusts, so a tampered export is not taken in silently."""
    if signatures_of(path) is None:
        return []
    keys = trusted_keys(project)
    notes = []
    for signed in csv_approvals(path, name):
        problem = signed.problem
        if not problem and signed.block.get("key_id") not in keys:
            problem = (
                f"signed by key {signed.block.get('key_id')!r}, which this project does not trust"
            )
        if not problem:
            problem = signature_problem(signed.block, signed.rows, keys[signed.block["key_id"]][0])
        if not problem and signed.block.get("project") != project.slug:
            problem = f"signed for project {signed.block.get('project')!r}, not {project.slug!r}"
        verdict = (
            f"its signature does NOT verify: {problem}" if problem else "its signature verifies"
        )
        notes.append(f"case {signed.case_id!r} ({signed.where}): imported as generated; {verdict}")
    return notes


class KeyRefused(Exception):
    """Why a key cannot be registered or revoked (user-facing); nothing was written."""


def _require_admin(actor, project: Project) -> None:
    if Role.ADMIN not in roles_of(actor, project):
        raise KeyRefused(f"{actor} is not an admin of project {project.slug!r}.")


def trusted_key_check(*, actor, project: Project, pem: str) -> str:
    """The key id `pem` would be registered under; KeyRefused if it cannot be.

    A trusted key signs in the place of the project's approvers, so trusting one takes an admin
    who is also an approver: an admin alone must not create ground truth around them."""
    _require_admin(actor, project)
    if Role.APPROVER not in roles_of(actor, project):
        raise KeyRefused(
            f"{actor} is not an approver of project {project.slug!r}: a trusted key signs in "
            "the place of its approvers, so only an admin who is also an approver may add one."
        )
    try:
        key = signing.load_public_key(pem.encode("utf-8"))
    except ValueError as error:
        raise KeyRefused(f"not an Ed25519 public key in PEM ({error}).") from None
    key_id = signing.key_id_of(key)
    existing = TrustedKey.objects.filter(project=project, key_id=key_id).first()
    if existing is not None and hasattr(existing, "revocation"):
        raise KeyRefused(f"key {key_id} was revoked for {project.slug!r}: it is not trusted again.")
    if existing is not None:
        raise KeyRefused(f"key {key_id} is already trusted by {project.slug!r}.")
    return key_id


@transaction.atomic
def trusted_key_register(*, actor, project: Project, pem: str, label: str = "") -> TrustedKey:
    """An admin who is also an approver registers another signer's Ed25519 public key for this project."""
    key = TrustedKey.objects.create(
        project=project,
        key_id=trusted_key_check(actor=actor, project=project, pem=pem),
        public_key_pem=pem.strip() + "\n",
        label=label.strip(),
        registered_by=actor,
    )
    project_event_record(
        project, actor, ProjectAction.KEY_TRUSTED, target=key.key_id, after={"label": key.label}
    )
    return key


@transaction.atomic
def trusted_key_revoke(*, actor, project: Project, key_id: str, reason: str) -> KeyRevocation:
    """A project admin stops trusting a registered key (leaked, or its owner left). Files it
    signed are refused from now on; ground truth already imported with it stays, as history,
    and its timeline names the key (correct it by approving a new version here)."""
    _require_admin(actor, project)
    if not reason.strip():
        raise KeyRefused("say why the key is revoked.")
    key = TrustedKey.objects.filter(project=project, key_id=key_id).first()
    if key is None:
        raise KeyRefused(f"project {project.slug!r} has no registered key {key_id!r}.")
    if hasattr(key, "revocation"):
        raise KeyRefused(f"key {key_id} is already revoked.")
    revocation = KeyRevocation.objects.create(key=key, reason=reason.strip(), revoked_by=actor)
    project_event_record(
        project,
        actor,
        ProjectAction.KEY_REVOKED,
        target=key_id,
        after={"reason": revocation.reason},
    )
    return revocation
