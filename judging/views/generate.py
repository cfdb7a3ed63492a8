"""The upload page of ground-truth generation: evidence, fields, instruction, blind readers."""

import uuid
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from judging.forms import GenerateForm
from judging.selectors import generation_runs, generations_recent
from judging.services.generation.reconcile import GenerationError, reader_runs_create
from judging.services.runs.control import runs_progress
from judging.tasks import generate_task
from reviews.access import project_for_user
from reviews.models import Role


def _save(files) -> list[str]:
    """Uploads to MEDIA_ROOT/generation/<uuid>/ under their base names (never a path)."""
    folder = Path(settings.MEDIA_ROOT) / "generation" / uuid.uuid4().hex
    folder.mkdir(parents=True)
    saved = []
    for upload in files:
        target = folder / Path(upload.name).name
        with target.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        saved.append(str(target))
    return saved


@require_http_methods(["GET", "HEAD", "POST"])
def generate(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    form = GenerateForm(request.POST or None, request.FILES or None, project=access.project)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:  # queued before the work, so the page shows their progress at once
            runs = reader_runs_create(
                project=access.project, readers=data["readers"], actor=request.user
            )
        except GenerationError as exc:
            form.add_error("readers", str(exc))
        else:
            options = {
                "fields": data["fields"],
                "instruction": data["instruction"],
                "readers": data["readers"],
                "min_agreement": data["min_agreement"],
                "second_read": data["second_read"],
                "run_ids": {name: run.pk for name, run in runs.items()},
            }
            generate_task.enqueue(access.project.pk, _save(data["files"]), options, request.user.pk)
            messages.success(
                request,
                "Generation queued: the readers' runs are below, and the items they make are "
                "listed under them once the runs are done.",
            )
            return redirect("generate", slug)
    runs = generation_runs(access.project)
    return render(
        request,
        "judging/generate.html",
        {
            "project": access.project,
            "form": form,
            "runs": runs_progress(runs),
            "generations": generations_recent(access.project),
        },
    )
