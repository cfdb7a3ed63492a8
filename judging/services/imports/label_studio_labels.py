"""Label Studio controls as criteria, annotations as human labels, predictions as verdicts.

Read in the validate step (`LabelStudioLabels.check`: every label checked, renamed by `--map`
or dropped by `--clip` once) and written in the import's transaction (`write`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from judging.formats.label_studio import Annotation, Control, Export, Mark, Prediction, Task
from judging.models import Criterion, Judge
from judging.services.imports.batches import (
    HumanLabelBatch,
    ItemLookup,
    PendingLabel,
    PendingVerdict,
    VerdictBatch,
)
from judging.services.imports.criteria import (
    CriterionConflict,
    CriterionDefinition,
    criterion_ensure,
    judge_ensure,
)
from judging.services.imports.records import LabelPolicy
from reviews.formats.errors import FormatError
from reviews.services.imports.pipeline import ImportContext

PROVIDER = "label-studio"  # a prediction's judge: {"provider": "label-studio", "model": ...}
UNVERSIONED = "unversioned"  # a prediction without model_version


@dataclass(frozen=True)
class Given:
    """One checked label (from an annotation) or verdict (from a prediction), to write."""

    task: Task
    control: str
    label: str
    annotation: Annotation | None = None
    prediction: Prediction | None = None
    sample: int = 0  # a task's predictions of one model_version are its samples 0, 1, ...


def _from_name(mark: Mark) -> str:
    return mark.path.rsplit(".value", 1)[0] + ".from_name"


def _definition(control: Control, labels: list[str]) -> CriterionDefinition:
    return CriterionDefinition(
        name=control.name,
        labels=labels,
        ordinal=control.tag == "Rating",
        text=f"Label Studio {control.tag} control {control.name!r}",
    )


class LabelStudioLabels:
    """The criteria, labels and verdicts of one export."""

    def __init__(self, context: ImportContext, field_keys: set[str]):
        self.context = context
        self.policy = LabelPolicy(context)
        for key in field_keys:  # `--map input=KEY` chose an item field, not a label
            self.policy.label_map.pop(key, None)
        self.definitions: dict[str, CriterionDefinition] = {}
        self.given: list[Given] = []
        self.notes: list[str] = []

    def check(self, export: Export, config: dict[str, Control] | None) -> None:
        """Criteria from the config (or the values seen), then every label checked."""
        controls = self._controls(export, config)
        seen: dict[str, list[str]] = {name: [] for name in controls}
        for _task, mark, *_ in self._marks(export):
            label = self.policy.label_map.get(mark.label, mark.label)
            if label not in seen[mark.control]:
                seen[mark.control].append(label)
        guessed = []
        for name, control in controls.items():
            labels = list(control.labels)
            if not labels or config is None:
                labels = _seen_labels(control, seen[name])
                guessed.append(name)
            if labels:
                self.definitions[name] = _definition(control, labels)
        named = ", ".join(repr(n) for n in guessed)
        if guessed and config is None:
            self.notes.append(
                f"warning: no label config was given: the labels of {named} are the values "
                "seen in this export; give the label config (--label-config, or a .xml in the "
                ".zip) so that every label is defined"
            )
        elif guessed:
            self.notes.append(f"the labels of {named} (TextArea: free text) are the texts seen")
        for task, mark, annotation, prediction, sample in self._marks(export):
            label = self.policy.apply(
                mark.label,
                self.definitions[mark.control],
                kind="human_label" if annotation else "verdict",
                where=task.where,
                path=mark.path,
            )
            if label is not None:
                self.given.append(Given(task, mark.control, label, annotation, prediction, sample))
        self.notes.extend(self.policy.notes())

    def _controls(self, export: Export, config: dict[str, Control] | None) -> dict[str, Control]:
        """The config's controls; without one, a control per name seen, of the tag seen."""
        controls = dict(config or {})
        for task, mark, *_ in self._marks(export):
            known = controls.get(mark.control)
            if known is None and config is not None:
                raise FormatError(
                    f"control {mark.control!r} is not in the label config (its controls: "
                    f"{', '.join(sorted(config)) or 'none'})",
                    file=self.context.file,
                    record=task.where,
                    path=_from_name(mark),
                )
            if known is not None and known.tag != mark.tag:
                raise FormatError(
                    f"control {mark.control!r} is a {known.tag}, this value is a {mark.tag}'s",
                    file=self.context.file,
                    record=task.where,
                    path=_from_name(mark),
                )
            controls.setdefault(mark.control, Control(mark.control, mark.tag))
        return controls

    @staticmethod
    def _marks(export: Export):
        """(task, mark, annotation, prediction, sample) for every value that is a label."""
        for task in export.tasks:
            for annotation in task.annotations:
                if not annotation.cancelled:
                    for mark in annotation.marks:
                        yield task, mark, annotation, None, 0
            samples: Counter = Counter()
            for prediction in task.predictions:
                sample = samples[prediction.model_version]
                samples[prediction.model_version] += 1
                for mark in prediction.marks:
                    yield task, mark, None, prediction, sample

    def write(self, pks: dict[str, int], external_id) -> None:
        """Criteria, then the labels and verdicts, in the import's transaction."""
        context = self.context
        criteria = {name: self._criterion(d) for name, d in self.definitions.items()}
        lookup = ItemLookup(context, known=pks)
        labels, verdicts = HumanLabelBatch(context, lookup), VerdictBatch(context, lookup)
        judges: dict[str, Judge] = {}
        out_of_range = 0
        for given in self.given:
            criterion, item_id = criteria[given.control], external_id(given.task)
            if given.annotation is not None:
                labels.add(_label(given, criterion, item_id))
                continue
            model = given.prediction.model_version or UNVERSIONED
            if model not in judges:
                judges[model], created = judge_ensure(
                    project=context.project, provider=PROVIDER, model=model
                )
                context.counts["judges"] += int(created)
            verdict = _verdict(given, criterion, judges[model], item_id)
            out_of_range += verdict.confidence is None and given.prediction.score is not None
            verdicts.add(verdict)
        labels.flush()
        verdicts.flush()
        if out_of_range:
            context.notes.append(
                f"{out_of_range} verdicts: the prediction's score is outside 0..1, so it is "
                "kept in the verdict's extra fields, not as its confidence"
            )

    def _criterion(self, definition: CriterionDefinition) -> Criterion:
        try:
            criterion, created = criterion_ensure(
                project=self.context.project, definition=definition
            )
        except CriterionConflict as conflict:
            raise FormatError(
                f"{conflict} (or give the label config that defined it)",
                file=self.context.file,
                record=f"control {definition.name!r}",
            ) from None
        self.context.counts["criteria" if created else "criteria_unchanged"] += 1
        return criterion


def _seen_labels(control: Control, seen: list[str]) -> list[str]:
    """Ratings 1 to the highest seen (an ordinal scale has no gaps); other labels sorted."""
    if control.tag == "Rating":
        top = max((int(label) for label in seen if label.isdigit()), default=0)
        return [str(n) for n in range(1, top + 1)] + [s for s in seen if not s.isdigit()]
    return sorted(seen)


def _label(given: Given, criterion: Criterion, item_id: str) -> PendingLabel:
    annotation = given.annotation
    return PendingLabel(
        item_id=item_id,
        criterion=criterion,
        rater=annotation.rater,
        label=given.label,
        where=given.task.where,
        extra={
            "label_studio": {
                "annotation_id": annotation.id,
                "user_id": annotation.user_id,
                "lead_time": annotation.lead_time,
            }
        },
    )


def _verdict(given: Given, criterion: Criterion, judge: Judge, item_id: str) -> PendingVerdict:
    score = given.prediction.score
    return PendingVerdict(
        item_id=item_id,
        criterion=criterion,
        judge=judge,
        label=given.label,
        where=given.task.where,
        sample=given.sample,
        confidence=score if score is not None and 0 <= score <= 1 else None,
        extra={"label_studio": {"prediction_id": given.prediction.id, "score": score}},
    )
