"""A leaked partner key can be taken back: files it signs are refused from then on, the
revocation is final and on record, and only the project's admins can revoke."""

import io

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import CommandError, call_command

from reviews.models import KeyRevocation, Role
from reviews.services.imports.approved import KeyRefused, trusted_key_register
from reviews.services.imports.pipeline import ImportFailed, file_import
from tests.builders import (
    export_all,
    review_file_of,
    signed_review_file,
    trust_counts,
    verify,
)
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db


def _pem(key) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def test_a_revoked_key_signs_nothing_more(tmp_path):
    project = ProjectFactory(slug="ledger")
    partner = Ed25519PrivateKey.generate()
    admin = member(project, Role.ADMIN, Role.APPROVER, username="boss")
    key = trusted_key_register(actor=admin, project=project, pem=_pem(partner))
    first = signed_review_file(tmp_path, partner, project="ledger", case_id="c1", version=1)
    assert file_import(actor=None, project=project, path=first).counts["ground_truth"] == 1

    with pytest.raises(CommandError, match="not an admin"):
        call_command(
            "revoke_key", key.key_id, project="ledger", by=member(project).username, reason="x"
        )
    out = io.StringIO()
    call_command("revoke_key", key.key_id, project="ledger", by="boss", reason="leaked", stdout=out)
    assert f"no longer trusts key {key.key_id}" in out.getvalue()
    assert KeyRevocation.objects.get(key=key).revoked_by == admin

    later = signed_review_file(tmp_path, partner, project="ledger", case_id="c1", version=2)
    fresh = signed_review_file(tmp_path, partner, project="ledger", case_id="c2", version=1)
    for path in (later, fresh):
        before = trust_counts()
        with pytest.raises(ImportFailed, match=f"key {key.key_id}, which this project revoked"):
            file_import(actor=None, project=project, path=path)
        assert trust_counts() == before
    with pytest.raises(KeyRefused, match="was revoked"):
        trusted_key_register(actor=admin, project=project, pem=_pem(partner))
    with pytest.raises(CommandError, match="already revoked"):
        call_command("revoke_key", key.key_id, project="ledger", by="boss", reason="again")


def test_after_rotating_the_site_key_old_exports_verify_with_the_old_public_key(
    project, review_item, rate, tmp_path, settings
):
    """docs/security.md, "Rotating the site's signing key", step by step."""
    from reviews.services.approval.approve import approval_record
    from tests.factories import PASSWORD

    item = review_item(project, external_id="c1")
    item.metadata = {"review_file": review_file_of(item)}  # as an import leaves it
    item.save(update_fields=["metadata"])
    for n in (1, 2):
        rate(member(project, Role.RATER, username=f"r{n}"), item, {"$.total": "1,200.00"})
    approval_record(
        actor=member(project, Role.APPROVER), item=item, password=PASSWORD, confirmed=True
    )
    old_pem = tmp_path / "old.pem"
    out = io.StringIO()
    call_command("public_key", stdout=out)
    old_pem.write_text(out.getvalue())
    (tmp_path / "export").mkdir()
    folder = export_all(project, tmp_path / "export")
    settings.SIGNING_KEY_PATH = tmp_path / "rotated-key.pem"

    ok, text = verify(folder)
    assert not ok and "$.approval.key_id: signed with key" in text, text
    ok, text = verify(folder, "--public-key", str(old_pem))
    assert ok, text
    review = folder / "c1.review.json"
    with pytest.raises(ImportFailed, match="which this project does not trust"):
        file_import(actor=None, project=project, path=review)
    both = member(project, Role.ADMIN, Role.APPROVER, username="boss")
    trusted_key_register(actor=both, project=project, pem=old_pem.read_text())
    before = trust_counts()
    file_import(actor=None, project=project, path=review)  # the same signed version: no-op
    assert trust_counts() == before
