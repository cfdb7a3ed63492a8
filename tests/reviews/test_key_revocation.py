"""A leaked partner key can be taken back: files it signs are refused from then on, the
revocation is final and on record, and only the project's admins can revoke."""

import io

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import CommandError, call_command

from reviews.models import KeyRevocation, Role
from reviews.services.approved_imports import KeyRefused, trusted_key_register
from reviews.services.imports import ImportFailed, file_import
from tests.factories import ProjectFactory, member
from tests.reviews.test_trust_chain import ROWS, _counts, _signed_file

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
    first = _signed_file(tmp_path, partner, project="ledger", case_id="c1", version=1, rows=ROWS)
    assert file_import(actor=None, project=project, path=first).counts["ground_truth"] == 1

    with pytest.raises(CommandError, match="not an admin"):
        call_command(
            "revoke_key", key.key_id, project="ledger", by=member(project).username, reason="x"
        )
    out = io.StringIO()
    call_command("revoke_key", key.key_id, project="ledger", by="boss", reason="leaked", stdout=out)
    assert f"no longer trusts key {key.key_id}" in out.getvalue()
    assert KeyRevocation.objects.get(key=key).revoked_by == admin

    later = _signed_file(tmp_path, partner, project="ledger", case_id="c1", version=2, rows=ROWS)
    fresh = _signed_file(tmp_path, partner, project="ledger", case_id="c2", version=1, rows=ROWS)
    for path in (later, fresh):
        before = _counts()
        with pytest.raises(ImportFailed, match=f"key {key.key_id}, which this project revoked"):
            file_import(actor=None, project=project, path=path)
        assert _counts() == before
    with pytest.raises(KeyRefused, match="was revoked"):
        trusted_key_register(actor=admin, project=project, pem=_pem(partner))
    with pytest.raises(CommandError, match="already revoked"):
        call_command("revoke_key", key.key_id, project="ledger", by="boss", reason="again")
