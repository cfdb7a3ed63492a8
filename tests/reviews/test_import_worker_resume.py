"""A worker killed (SIGKILL) while an upload's import stores evidence: the next worker to start
resumes the job by itself, and the files the killed attempt stored are removed when the job
ends, whether it then succeeds or fails.

Real processes on a SQLite file; the upload is a bundle of review files each citing its own PDF.
"""

import json
import os
import signal
import zipfile

import pytest

from reviews.evidence import DrawText, build_pdf
from tests.helpers import sqlite_site_env
from tests.worker_processes import manage, migrate, query, wait_for, worker

N_CASES = 400
START = """
from django.core.files import File
from django.db import transaction
from reviews.models import Project
from reviews.services.imports.jobs import import_job_start
from reviews.tasks import run_import_job
with open({path!r}, "rb") as handle, transaction.atomic():
    job = import_job_start(actor=None, project=Project.objects.get(slug="kill"),
                           upload=File(handle, name="bundle.zip"))
    transaction.on_commit(lambda: run_import_job.enqueue(job.pk))
"""


def bundle(path, n: int):
    with zipfile.ZipFile(path, "w") as zf:
        for i in range(n):
            zf.writestr(f"c{i}.pdf", build_pdf([[DrawText(72, 72, f"Total {i}", size=12)]]))
            review = {
                "case_id": f"c{i}",
                "sources": [{"artifact_id": "p1", "path": f"c{i}.pdf", "authority": "evidence"}],
                "claims": [{"path": "$.total", "expected_value": str(i), "reference_id": "p1"}],
            }
            zf.writestr(f"c{i}.review.json", json.dumps(review))
    return path


def stored(tmp_path) -> set[str]:
    folder = tmp_path / "media" / "documents"
    return {str(p.relative_to(tmp_path / "media")) for p in folder.rglob("*") if p.is_file()}


def documents_named(db) -> set[str]:
    return {name for (name,) in query(db, "select file from reviews_document")}


@pytest.mark.parametrize("upload_broken_meanwhile", [False, True])
def test_a_killed_import_is_resumed_by_the_next_worker_and_leaves_no_orphans(
    tmp_path, upload_broken_meanwhile
):
    db = tmp_path / "db.sqlite3"
    env = sqlite_site_env(tmp_path, TASKS_BACKEND="database", IMPORT_STALE_SECONDS="1")
    upload = bundle(tmp_path / "bundle.zip", N_CASES)
    migrate(env)
    manage(env, "create_project", "kill")
    manage(env, "shell", "-c", START.format(path=str(upload)))

    first = worker(env)
    try:
        wait_for(
            lambda: (tmp_path / "media" / "documents").exists() and len(stored(tmp_path)) >= 20
        )
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    assert query(db, "select status from reviews_importjob") == [("running",)]
    # Nothing published: on SQLite the killed attempt's rows wait in a holding project nobody
    # sees (reviews/services/imports/staging.py), discarded when the job is taken up again.
    published = "select count(*) from reviews_item i join reviews_project p on p.id = i.project_id"
    assert query(db, f"{published} where p.slug = 'kill'") == [(0,)]
    assert stored(tmp_path), "the killed attempt left evidence files"
    if upload_broken_meanwhile:  # the resumed attempt is refused before it stores anything
        [(name,)] = query(db, "select file from reviews_importjob")
        (tmp_path / "media" / name).write_bytes(b"not a zip")

    second = worker(env)  # nobody presses Retry
    try:
        wait_for(
            lambda: (
                query(db, "select status from reviews_importjob")[0][0] in ("succeeded", "failed")
            ),
            timeout=240,
        )
        # The job's end is written before its stored files are removed: killing the worker
        # at once raced the removal (seen under a loaded `make test`), so wait for it.
        wait_for(lambda: stored(tmp_path) == documents_named(db), timeout=30)
    finally:
        os.killpg(second.pid, signal.SIGKILL)
        second.wait()
    [(status, report)] = query(db, "select status, report from reviews_importjob")
    assert json.loads(report)["resumes"] == 1
    documents = documents_named(db)
    if upload_broken_meanwhile:
        assert status == "failed" and documents == set()
    else:
        assert status == "succeeded" and len(documents) == N_CASES
    assert stored(tmp_path) == documents, "orphan evidence files remain"
