from evalsite.management.lookups import ProjectCommand, form_or_error
from reviews.forms_questions import QuestionDefinitionForm
from reviews.services.projects.questions import QuestionType, question_define


class Command(ProjectCommand):
    help = (
        "Define a question (criterion) as the browser's question builder does, with the same "
        "rules and messages: new labels, text or flags make a new version (questions already "
        "asked keep theirs); the same definition again changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--labels", default="", metavar="A,B,...", help="in order (ordinal: lowest first)"
        )
        parser.add_argument("--positive", default="", metavar="LABEL", help="the passing label")
        parser.add_argument("--ordinal", action="store_true", help="the labels are a rating")
        parser.add_argument("--critical", action="store_true")
        parser.add_argument("--text", default="", help="the guidance raters read")
        parser.add_argument(
            "--kind",
            choices=QuestionType.values,
            help="default: ordinal with --ordinal, pass_fail with two labels and --positive, "
            "else choice",
        )

    def handle_project(self, project, **o):
        form = QuestionDefinitionForm(
            {
                "name": o["name"],
                "kind": o["kind"] or _kind(o),
                "labels": o["labels"],
                "positive": o["positive"],
                "critical": "on" if o["critical"] else "",
                "text": o["text"],
            }
        )
        form_or_error(form)
        defined = question_define(project=project, actor=None, definition=form.definition())
        what = "defined version" if defined.created else "unchanged, still version"
        self.stdout.write(
            f"{defined.request}: {what} {defined.version} (import_items --questions "
            f"{defined.request} asks it)"
        )


def _kind(options: dict) -> str:
    if options["ordinal"]:
        return QuestionType.ORDINAL
    if options["positive"] and len([x for x in options["labels"].split(",") if x.strip()]) == 2:
        return QuestionType.PASS_FAIL
    return QuestionType.CHOICE
