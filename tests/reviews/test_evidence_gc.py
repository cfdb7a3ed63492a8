"""Evidence files: a refused import removes only what no committed Document references, and
`evidence_gc` removes old unreferenced files, never a referenced one (#11)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.urls import reverse

from reviews.models import Document, Role
from reviews.services.files.documents import StoredFiles
from reviews.services.files.gc import evidence_gc
from reviews.services.imports.pipeline import file_import
from tests.factories import member

pytestmark = pytest.mark.django_db
EXAMPLES = Path(__file__).resolve().parent.parent / "data" / "examples"


def _age(name: str, hours: float) -> None:
    path = default_storage.path(name)
    then = time.time() - hours * 3600
    os.utime(path, (then, then))


def test_a_failed_import_keeps_a_file_another_import_committed(project, tmp_path, client):
    """Two imports share a file: the one that fails must not take it from the other."""
    for name in ("statement-0912.review.json", "statement-0912.pdf"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    file_import(actor=None, project=project, path=tmp_path / "statement-0912.review.json")
    document = Document.objects.get()
    # The failing import had written the same file before the other committed its row.
    failed = StoredFiles(names=[document.file.name, "documents/ff/orphan.pdf"])
    default_storage.save("documents/ff/orphan.pdf", ContentFile(b"%PDF-1.4"))
    failed.discard()
    assert default_storage.exists(document.file.name)  # the committed one stays
    assert not default_storage.exists("documents/ff/orphan.pdf")
    client.force_login(member(project, Role.RATER))
    page = client.get(reverse("evidence_page", args=[project.slug, document.sha256, 1]))
    assert page.status_code == 200 and page["Content-Type"].startswith("image/")


def test_evidence_gc_removes_only_old_unreferenced_files(project, tmp_path, capsys):
    for name in ("statement-0912.review.json", "statement-0912.pdf"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    file_import(actor=None, project=project, path=tmp_path / "statement-0912.review.json")
    kept = Document.objects.get().file.name
    old = default_storage.save("documents/aa/old-orphan.pdf", ContentFile(b"%PDF"))
    young = default_storage.save("documents/bb/young-orphan.pdf", ContentFile(b"%PDF"))
    _age(kept, 48)
    _age(old, 48)
    assert evidence_gc() == [old]
    assert default_storage.exists(kept) and default_storage.exists(young)
    _age(young, 2)
    call_command("evidence_gc")
    assert "removed 1 unreferenced evidence files" in capsys.readouterr().out
    assert not default_storage.exists(young) and default_storage.exists(kept)
    assert Path(settings.MEDIA_ROOT, kept).is_file()


def test_an_evidence_file_is_named_to_its_journal_before_it_is_written(monkeypatch):
    """A worker killed while it writes an evidence file leaves no file its job's journal
    does not name (the journal's names are removed when the job ends, if unreferenced)."""
    from reviews.services.files import documents

    pdf = (EXAMPLES / "statement-0912.pdf").read_bytes()
    journal: list[str] = []

    class KilledWhileWriting:
        exists = staticmethod(default_storage.exists)

        def save(self, name, content):
            assert journal == [name], "the file is written before its journal names it"
            default_storage.save(name, content)
            raise SystemExit  # the worker dies before anything after the write runs

    monkeypatch.setattr(documents, "default_storage", KilledWhileWriting())
    with pytest.raises(SystemExit):
        documents.document_for_bytes(
            pdf, name="statement.pdf", written=StoredFiles(on_store=journal.append)
        )
    assert default_storage.exists(journal[0])
    assert Document.objects.count() == 0
