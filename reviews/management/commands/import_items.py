from pathlib import Path

from django.core.management.base import CommandError

from evalsite.management.lookups import ProjectCommand
from reviews.services.imports.pipeline import (
    ImportFailed,
    file_import,
    import_formats,
    import_options,
)
from reviews.services.imports.questions import split_requests


class Command(ProjectCommand):
    help = (
        "Import a review file, bundle, JSONL/CSV records or TextFlow results; or images and "
        "PDFs (several, a folder or a .zip of them), an item each (one transaction)."
    )
    missing_hint = " (create it first with create_project)"

    def add_arguments(self, parser):
        parser.add_argument(
            "path", type=Path, nargs="+", help="a file; several images/PDFs or a folder of them"
        )
        parser.add_argument(
            "--format", choices=import_formats(), help="default: detected from the content"
        )
        parser.add_argument(
            "--kind", help="CSV records: the record kind when there is no type column"
        )
        parser.add_argument(
            "--judge", help="TextFlow: the judge as provider/model (default openai/gpt-4o)"
        )
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="FROM=TO",
            help="rename a label before checking it against the criterion (repeatable); "
            "label-studio: input=KEY, output=KEY, reference=KEY choose the item's fields from "
            "the task's data",
        )
        parser.add_argument(
            "--label-config",
            type=Path,
            metavar="XML",
            help="label-studio: the project's label config (its controls' labels)",
        )
        parser.add_argument(
            "--questions",
            action="append",
            default=[],
            metavar="criterion:NAME",
            help="ask this question on every imported item (repeatable; the project's own "
            "import questions are asked too)",
        )
        parser.add_argument(
            "--clip",
            action="store_true",
            help="drop verdicts/labels outside the criterion's label set instead of failing",
        )
        parser.add_argument(
            "--as-generated",
            action="store_true",
            help="approved files whose signature this project does not accept: import their "
            "rows as a generated reference to review and approve here (default: refuse)",
        )

    def handle_project(
        self,
        project,
        *,
        path: list[Path],
        format,
        kind,
        judge,
        map,
        clip,
        as_generated,
        questions,
        label_config,
        **_,
    ):
        for one in path:
            if not (one.is_file() or one.is_dir()):
                raise CommandError(f"{one}: no such file or folder.")
        opts = {
            "kind": kind,
            "judge": judge,
            "label_map": _label_map(map),
            "clip": clip,
            "as_generated": as_generated,
            "questions": split_requests(questions),
            **_label_config(label_config),
        }
        try:  # the report names the file by its name (several: "N files"), file_import's default
            report = file_import(
                actor=None,
                project=project,
                path=path,
                format=format,
                options=import_options(**opts),
            )
        except ImportFailed as failure:
            self.stderr.write(f"imported 0 items, 0 questions, 1 error\n{failure}")
            raise CommandError("import refused; nothing was written") from None
        for note in report.notes:
            self.stdout.write(f"note: {note}")
        self.stdout.write(report.summary())


def _label_config(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    try:
        return {"label_config": path.read_text(encoding="utf-8"), "label_config_name": path.name}
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"{path}: cannot read the label config ({error}).") from None


def _label_map(pairs: list[str]) -> dict[str, str]:
    """`--map FROM=TO` options as {FROM: TO}."""
    label_map = {}
    for pair in pairs:
        source, sep, dest = pair.partition("=")
        if not sep or not source:
            raise CommandError(f"--map {pair!r}: write it as FROM=TO.")
        label_map[source] = dest
    return label_map
