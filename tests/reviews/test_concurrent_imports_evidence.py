"""Two imports share an evidence file and one fails, while `evidence_gc` runs: real threads.

Each round makes a new PDF (so no earlier Document protects it) cited by the same review file,
imported at once into two projects: one succeeds, the other fails after storing the file (an
unknown question asked for its items), and a third thread collects garbage with no age limit.
Whatever the interleaving, the committed import's file is there, whole, kept by the collector,
and its page still renders. (The collector may have removed the same name before the commit: the
refused import's copy, stored again by the other.) Runs on SQLite, and on PostgreSQL with
DATABASE_URL set.
"""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.db import connection
from django.urls import reverse

from reviews.evidence import DrawText, build_pdf
from reviews.models import Document, Role
from reviews.services.files.gc import evidence_gc
from reviews.services.imports.pipeline import ImportFailed, file_import
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db(transaction=True)
ROUNDS = 4


def _bundle(folder, n: int):
    """A review file citing a PDF no other round uses."""
    text = f"Total due 1 (round {n})"
    (folder / f"r{n}.pdf").write_bytes(build_pdf([[DrawText(72, 72, text, size=12)]]))
    review = {
        "case_id": f"r{n}",
        "sources": [{"artifact_id": "p1", "path": f"r{n}.pdf", "authority": "evidence"}],
        "claims": [{"path": "$.total", "expected_value": "1", "reference_id": "p1"}],
    }
    path = folder / f"r{n}.review.json"
    path.write_text(json.dumps(review))
    return path


def _in_thread(results, key, barrier, work):
    def run():
        try:
            barrier.wait()
            results[key] = work()
        except Exception as error:  # noqa: BLE001 - the test reads what each thread raised
            results[key] = error
        finally:
            connection.close()

    return threading.Thread(target=run)


def test_a_failing_import_and_evidence_gc_never_take_a_committed_file(client, tmp_path):
    for n in range(ROUNDS):
        path = _bundle(tmp_path, n)
        good, bad = ProjectFactory(), ProjectFactory()
        done = threading.Event()

        def collect():
            removed = []
            while not done.is_set():
                removed += evidence_gc(older_than=timedelta(0))
            return removed

        results, barrier = {}, threading.Barrier(3, timeout=60)
        workers = [
            _in_thread(results, "good", barrier, lambda: file_import(
                actor=None, project=good, path=path)),  # fmt: skip
            _in_thread(results, "bad", barrier, lambda: file_import(
                actor=None, project=bad, path=path, options={"questions": ["criterion:nope"]})),
        ]  # fmt: skip
        gc = _in_thread(results, "gc", barrier, collect)
        for thread in [*workers, gc]:
            thread.start()
        for thread in workers:
            thread.join(timeout=120)
        done.set()
        gc.join(timeout=120)

        assert isinstance(results["bad"], ImportFailed), results["bad"]
        assert "nope" in str(results["bad"])
        assert not isinstance(results["good"], Exception), results["good"]
        assert isinstance(results["gc"], list), results["gc"]
        document = Document.objects.filter(sources__item__project=good).distinct().get()
        assert not Document.objects.filter(sources__item__project=bad).exists()
        # The name is the content's hash, so the gc may rightly have removed it once: the refused
        # import's copy, after its rollback and before the good import stored the file again.
        # Once the Document commits nothing stores that name again (imports find the row), so a
        # delete after the commit leaves it missing here; and the gc now keeps it.
        assert default_storage.exists(document.file.name), f"round {n}: the file was taken"
        with default_storage.open(document.file.name) as stored:
            assert hashlib.sha256(stored.read()).hexdigest() == document.sha256, n
        assert document.file.name not in evidence_gc(older_than=timedelta(0)), n
        client.force_login(member(good, Role.RATER))
        url = reverse("evidence_page", args=[good.slug, document.sha256, 1])
        page = client.get(url)
        assert page.status_code == 200 and page["Content-Type"].startswith("image/"), n
