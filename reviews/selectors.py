"""Reusable reads: they own their joins and what each user may see."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection
from django.db.models import Count, Q

from evalsite import raw_rows
from reviews.models import (
    Answer,
    Approval,
    Assignment,
    AssignmentStatus,
    Authority,
    Claim,
    Document,
    Item,
    ItemStatus,
    Job,
    Membership,
    Question,
    QuestionKind,
    QuestionStatus,
    Reference,
    Resolution,
    Role,
)
from reviews.selectors_workspace import (
    workspace_answers,
    workspace_candidates,
    workspace_documents,
    workspace_questions,
)
from reviews.services.jobs.registry import KINDS

COUNT_LIMIT = 1_000  # list totals are exact up to here, then "1,000+"
RECENT_JOBS = 5


def recent_jobs_statement(project) -> tuple[str, list]:
    """The statement `recent_jobs` runs (the item list reads it ahead: raw_rows.read_ahead)."""
    return (
        "SELECT id, kind, status, created_at FROM reviews_job WHERE project_id = %s"
        " ORDER BY created_at DESC, id DESC LIMIT %s",
        [project.pk, RECENT_JOBS],
    )


def recent_jobs(project) -> list[tuple[Job, str]]:
    """The project's latest background jobs with what each is (its kind's label), for the
    pages that start them: a job page stays reachable after one leaves it.

    Read by hand (`evalsite/raw_rows.py`: the item list, which `make bench` times, shows
    them): the jobs as `.only("kind", "status", "created_at")` gives them, newest first
    (tests/reviews/test_recent_jobs.py holds them to the ORM's on both databases)."""
    rows = raw_rows.fetch_kept(project, *recent_jobs_statement(project))
    at = raw_rows.converter(Job, "created_at")
    names = ["id", "kind", "status", "created_at"]
    jobs = [
        Job.from_db(connection.alias, names, [pk, kind, status, at(created)])
        for pk, kind, status, created in rows
    ]
    return [(job, getattr(KINDS.get(job.kind), "label", job.kind)) for job in jobs]


def bounded_count(queryset, limit: int = COUNT_LIMIT) -> tuple[int, bool]:
    """(count, more): counts at most `limit` + 1 rows, so the cost does not grow past the limit
    with the project (an exact COUNT reads every matching row: 100k rows on each page view)."""
    n = queryset.order_by().values("pk")[: limit + 1].count()
    return min(n, limit), n > limit


def item_counts_by_status(project) -> dict[str, tuple[int, bool]]:
    """Items of `project` per status as (count, more than that): one bounded count per status
    (each reads at most COUNT_LIMIT + 1 index entries), so the cost stops growing with the
    project where an exact GROUP BY would read every item."""
    items = Item.objects.filter(project=project)
    return {status: bounded_count(items.filter(status=status)) for status in ItemStatus.values}


def assignment_counts_for_rater(*, rater, project) -> dict[str, int]:
    """The rater's assignments in `project`: in progress, waiting (pre-assigned), submitted."""
    return Assignment.objects.filter(rater=rater, item__project=project).aggregate(
        active=Count("id", filter=Q(status=AssignmentStatus.ACTIVE)),
        assigned=Count("id", filter=Q(status=AssignmentStatus.ASSIGNED)),
        submitted=Count("id", filter=Q(status=AssignmentStatus.SUBMITTED)),
    )


def has_queue_role(user) -> bool:
    """Does `user` rate, adjudicate or approve in some project (a role with a queue)?"""
    roles = [Role.RATER, Role.ADJUDICATOR, Role.APPROVER]
    return Membership.objects.filter(user_id=user.pk, role__in=roles).exists()


def memberships_of(user) -> list[dict]:
    """[{slug, name, roles}] of every project `user` belongs to, by name (the API's list)."""
    rows = (
        Membership.objects.filter(user_id=user.pk)
        .order_by("project__name", "project_id", "role")
        .values_list("project__slug", "project__name", "role")
    )
    by_slug: dict[str, dict] = {}
    for slug, name, role in rows:
        by_slug.setdefault(slug, {"slug": slug, "name": name, "roles": []})["roles"].append(role)
    return list(by_slug.values())


def projects_with_roles(user) -> list[tuple]:
    """[(project, sorted role labels, item count)] for every project `user` belongs to."""
    memberships = (
        Membership.objects.filter(user_id=user.pk)
        .select_related("project")
        .order_by("project__name", "role")
    )
    by_project: dict[int, tuple] = {}
    for membership in memberships:
        project = membership.project
        entry = by_project.setdefault(project.pk, (project, []))
        entry[1].append(membership.get_role_display())
    item_counts = dict(
        Item.objects.filter(project_id__in=by_project)
        .values_list("project_id")
        .annotate(n=Count("id"))
        .values_list("project_id", "n")
    )
    return [(project, roles, item_counts.get(pk, 0)) for pk, (project, roles) in by_project.items()]


@dataclass(frozen=True)
class CandidateView:
    """What a rater may see of a candidate: no provider or confidence in blind projects."""

    pk: int
    number: int
    value: object
    providers: str | None
    confidence: float | None
    page: int | None
    quote: str
    bbox: list | None
    document_sha: str | None


@dataclass(frozen=True)
class QuestionView:
    question: Question
    candidates: list[CandidateView]
    my_answer: Answer | None  # the rater's own latest answer, never anyone else's
    options: list[tuple[str, str]]  # pairwise: [(original label, text)] in this rater's order
    status: str  # as the rater sees it: a gold item's questions look open
    # The rater's latest answer to a criterion or pairwise question when it was given on an
    # earlier revision of the item's content (then `my_answer` is None: it is asked again).
    earlier: Answer | None = None

    @property
    def seq(self) -> int:
        latest = self.my_answer or self.earlier
        return latest.seq if latest else 0


def rater_workspace(
    *,
    rater,
    item,
    blind: bool,
    pairwise_orders: dict | Callable[[list[Question]], dict],
    settled: bool = False,
    gold: bool = False,
) -> list[QuestionView]:
    """The item's open questions (with `settled`, all of them) as `rater` may see them: their
    own answers only. On a gold assignment (`gold`) every question, shown as open: the page
    must not tell a gold item from any other.

    Three queries whatever the project size, written by hand (`reviews/selectors_workspace.py`):
    questions, candidates with their sources, and the rater's own answers (filtered by rater
    in SQL: other raters' rows never leave the DB).
    `pairwise_orders`: the display orders by question pk, or a function giving them for the
    questions shown (the review page's, from the questions read here: no query of its own).
    """
    questions = workspace_questions(item, every=settled or gold)
    if callable(pairwise_orders):
        pairwise_orders = pairwise_orders(questions)
    by_question: dict[int, list[Claim]] = {}
    for claim in workspace_candidates(questions):
        by_question.setdefault(claim.question_id, []).append(claim)
    mine = {answer.question_id: answer for answer in workspace_answers(questions, rater)}
    asked_again = {q.pk for q in questions if q.kind != QuestionKind.FIELD}
    earlier = {pk: a for pk, a in mine.items() if a.revision != item.revision and pk in asked_again}
    return [
        QuestionView(
            question=q,
            candidates=[
                candidate_view(c, n, blind) for n, c in enumerate(by_question.get(q.pk, []), 1)
            ],
            my_answer=None if q.pk in earlier else mine.get(q.pk),
            options=[
                (label, q.options.get(label, "")) for label in pairwise_orders.get(str(q.pk), [])
            ],
            status=QuestionStatus.OPEN if gold else q.status,
            earlier=earlier.get(q.pk),
        )
        for q in questions
    ]


def candidate_view(claim: Claim, number: int, blind: bool) -> CandidateView:
    """The one place a CandidateView is built (review screen and adjudication panel alike);
    `claim.source.document` should be selected with it."""
    document = claim.source.document if claim.source else None
    return CandidateView(
        pk=claim.pk,
        number=number,
        value=claim.value,
        providers=None if blind else claim.provider_label,
        confidence=None if blind else claim.confidence,
        page=claim.page,
        quote=claim.quote,
        bbox=claim.bbox,
        document_sha=document.sha256 if document else None,
    )


def current_approvals(project, *, after: str | None = None, external_id: str | None = None):
    """The same rows as `exports.approved_items` (current ground truth, by external id), as a
    queryset so a page is one bounded query rather than a walk over every approval; from after
    the case id `after`, or the one case `external_id`."""
    approvals = (
        Approval.objects.filter(item__project=project, reference__superseded_by__isnull=True)
        .select_related("item", "reference__supersedes", "reference__derived_from")
        .order_by("item__external_id")
    )
    if after:
        approvals = approvals.filter(item__external_id__gt=after)
    if external_id is not None:
        approvals = approvals.filter(item__external_id=external_id)
    return approvals


def approved_more_than(project, limit: int) -> bool:
    """Whether more than `limit` items are approved (their current ground truth signed): at
    most `limit` + 1 rows read, whatever the project's size."""
    return current_approvals(project).order_by().values("pk")[: limit + 1].count() > limit


def item_slices(item):
    return item.slices.order_by("name")


def item_history(item) -> tuple:
    """The item's timeline (events, oldest first, with their actors) and its references'
    versions (with who made each): the timeline page."""
    events = item.events.select_related("actor").order_by("created_at", "id")
    references = item.references.select_related("created_by").order_by("version")
    return events, references


def item_documents(item) -> list[Document]:
    """The item's evidence documents in source order, each once (read by hand: every review
    page shows them, `reviews/selectors_workspace.py`)."""
    return workspace_documents(item)


@dataclass(frozen=True)
class RaterAnswerView:
    """One rater's latest answer, as an adjudicator sees it (name hidden unless allowed)."""

    rater_label: str
    answer: Answer


def answers_for_adjudication(*, item, show_names: bool) -> dict[int, list[RaterAnswerView]]:
    """Per question, each submitted rater's latest answer; raters numbered in claim order."""
    assignments = list(
        Assignment.objects.filter(item=item, status=AssignmentStatus.SUBMITTED, gold=False)
        .select_related("rater")
        .order_by("claimed_at", "id")
    )
    labels = {
        a.rater_id: (a.rater.get_full_name() or a.rater.get_username())
        if show_names
        else f"Rater {n}"
        for n, a in enumerate(assignments, start=1)
    }
    latest: dict[tuple[int, int], Answer] = {}
    answers = Answer.objects.filter(question__item=item, rater_id__in=labels).order_by("seq")
    for answer in answers.select_related("chosen_claim"):
        latest[(answer.question_id, answer.rater_id)] = answer
    by_question: dict[int, list[RaterAnswerView]] = {}
    for (question_id, rater_id), answer in sorted(latest.items()):
        by_question.setdefault(question_id, []).append(RaterAnswerView(labels[rater_id], answer))
    return by_question


@dataclass(frozen=True)
class AdjudicationPanel:
    """One question as an adjudicator sees it: candidates, raters' answers, current decision."""

    question: Question
    candidates: list[CandidateView]
    answers: list[RaterAnswerView]
    resolution: Resolution | None


def adjudication_panels(*, item, show_names: bool) -> list[AdjudicationPanel]:
    """Every question of `item`, in a fixed number of queries whatever the question count."""
    answers = answers_for_adjudication(item=item, show_names=show_names)
    resolutions = current_resolutions(item)
    questions = item.questions.order_by("position", "id").prefetch_related(
        "candidates__source__document"
    )
    return [
        AdjudicationPanel(
            question=question,
            candidates=[
                candidate_view(c, n, blind=False)
                for n, c in enumerate(question.candidates.all(), start=1)
            ],
            answers=answers.get(question.pk, []),
            resolution=resolutions.get(question.pk),
        )
        for question in questions
    ]


def next_item_to_adjudicate(*, project, after: Item, user) -> Item | None:
    """The adjudication queue's first item other than `after` (the queue's own order) that
    `user` may decide: with separation of duties, not one they rated."""
    waiting = project.items.filter(status=ItemStatus.ADJUDICATION).exclude(pk=after.pk)
    if project.separation_of_duties:
        rated = Assignment.objects.filter(
            rater=user, status=AssignmentStatus.SUBMITTED, gold=False
        ).values("item_id")
        waiting = waiting.exclude(pk__in=rated)
    return waiting.order_by("updated_at", "id").only("id", "external_id", "title").first()


def first_question_to_decide(panels: list[AdjudicationPanel]) -> Question | None:
    """Where an adjudicator starts: the first question waiting for them, else the first open."""
    waiting = [p.question for p in panels if p.question.status == QuestionStatus.ADJUDICATION]
    unresolved = [p.question for p in panels if p.question.status != QuestionStatus.RESOLVED]
    return next(iter(waiting or unresolved), None)


def current_resolutions(item) -> dict[int, Resolution]:
    """Each question's newest resolution (history is append-only), in one query."""
    newest: dict[int, Resolution] = {}
    rows = Resolution.objects.filter(question__item=item).select_related("decided_by")
    for resolution in rows.order_by("question_id", "created_at", "pk"):
        newest[resolution.question_id] = resolution
    return newest


def item_citing(project, sha256: str) -> Item | None:
    """The one item of `project` whose evidence is this document (None if none, or several):
    ground truth generated from evidence already imported with its prediction lands on it."""
    items = list(
        Item.objects.filter(project=project, sources__document__sha256=sha256).distinct()[:2]
    )
    return items[0] if len(items) == 1 else None


def prediction_producer(item: Item | None) -> str:
    """`provider/model` of the system whose prediction the item holds, when its import said so
    (a §4 item's `producer`, kept in its metadata, or a review file's top-level `producer`):
    `"openai/gpt-4o"` or `{"provider": "openai", "model": "gpt-4o"}`; "" when unknown."""
    metadata = (item.metadata or {}) if item is not None else {}
    given = metadata.get("producer") or (metadata.get("review_file") or {}).get("producer")
    if isinstance(given, dict):
        provider, model = given.get("provider"), given.get("model")
        return f"{provider}/{model}" if provider and model else ""
    return given if isinstance(given, str) and "/" in given else ""


@dataclass(frozen=True)
class AgreedRows:
    reference: Reference | None  # the latest generated reference
    rows: list[dict]  # its rows no field question asks about: settled by the models' agreement


def agreed_rows(item: Item) -> AgreedRows:
    """The generated rows nobody was asked about (the readers agreed), for the item page: they
    reach ground truth on approval without a question, so an overseer sees them beside the
    questions. Two queries."""
    generated = item.references.filter(authority=Authority.GENERATED).order_by("-version").first()
    if generated is None:
        return AgreedRows(None, [])
    asked = set(item.questions.filter(kind=QuestionKind.FIELD).values_list("key", flat=True))
    return AgreedRows(generated, [row for row in generated.rows if row["path"] not in asked])
