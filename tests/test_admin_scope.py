"""The site admin shows and changes only rows of the projects the user administers, except for
superusers (evalsite/admin_scope.py). Walked over EVERY registered ModelAdmin, so a new one
cannot slip through unscoped: a staff user in no project, with every permission an operator
could grant, sees no row in any changelist and opens no row's page; an admin of one demo
project sees exactly that project's rows; a superuser sees them all."""

from dataclasses import dataclass

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from evalsite.admin_scope import ProjectScoped, Scoped, SuperuserOnly
from judging.models import (
    Call,
    Criterion,
    DashboardSnapshot,
    FailureBucket,
    FailureTag,
    GateSetting,
    HumanLabel,
    ItemSplit,
    Judge,
    JudgeConfig,
    JudgeVersion,
    ModelPrice,
    Panel,
    PanelMember,
    ProjectBudget,
    Run,
    SplitDraw,
    Verdict,
)
from judging.services.calibration.splits import held_out_access_log
from reviews.models import (
    AssignmentBatch,
    Document,
    ImportJob,
    KeyRevocation,
    Membership,
    Project,
    ProjectAction,
    RaterQualitySetting,
    Role,
    Slice,
    TrustedKey,
)
from reviews.services.approval.approve import approval_record
from reviews.services.projects.audit import project_event_record
from reviews.services.projects.tokens import token_create
from reviews.services.rating.quality import gold_mark
from reviews.services.rating.resolution import adjudication_record
from tests import builders
from tests.factories import PASSWORD, UserFactory, member
from tests.helpers import per_test_copy

User = get_user_model()
REGISTERED = sorted(admin.site._registry.items(), key=lambda pair: pair[0]._meta.label)
IDS = [model._meta.label for model, _ in REGISTERED]
GATE = {"criterion": "safe", "min_lower": 0.6, "min_n": 50, "max_ci_width": 0.3}


@dataclass
class World:
    demo: Project  # `insider` administers it
    other: Project  # nobody here but superusers sees its rows
    insider: User
    outsider: User
    root: User


def _every_permission(user):
    user.user_permissions.set(Permission.objects.all())
    return User.objects.get(pk=user.pk)  # the permission cache starts empty


def _project_rows(slug: str) -> Project:
    """A project with a row of every project table: an item rated, adjudicated, approved and
    marked gold, with evidence; a batch, an import job, a trusted key revoked, an audit line; judging's
    criterion, judge, verdict, label, split, gate, snapshot, bucket, tag, judge config and
    version, run, call, panel; its admin looked at held-out figures."""
    project = Project.objects.create(slug=slug, name=f"{slug.title()} project")
    admin_user = member(project, Role.ADMIN, Role.APPROVER, username=f"{slug}-admin")
    item = builders.review_item_builder()(project)
    builders.attach_evidence(item, text=f"Statement of {slug}")  # a document of its own
    for n in (1, 2):
        builders.rate(
            member(project, Role.RATER, username=f"{slug}-r{n}"), item, {"$.total": f"{n}"}
        )
    adjudication_record(
        actor=member(project, Role.ADJUDICATOR, username=f"{slug}-adj"),
        question=item.questions.get(), decision="set", value="1", reason="page 1",
    )  # fmt: skip
    item.refresh_from_db()
    approval_record(actor=admin_user, item=item, password=PASSWORD, confirmed=True)
    gold_mark(actor=admin_user, item=item)
    Slice.objects.create(project=project, name="slice")
    AssignmentBatch.objects.create(project=project, name="batch")
    ImportJob.objects.create(project=project, file="imports/x.jsonl", original_name="x.jsonl")
    RaterQualitySetting.objects.create(project=project)
    key = TrustedKey.objects.create(
        project=project, key_id=slug, public_key_pem="pem", registered_by=admin_user
    )
    KeyRevocation.objects.create(key=key, reason="left", revoked_by=admin_user)
    project_event_record(project, admin_user, ProjectAction.SETTINGS_CHANGED, after={"x": 1})
    criterion = Criterion.objects.create(project=project, name="faithful", labels=["yes", "no"])
    judge = Judge.objects.create(project=project, provider="p", model="m", configuration="p/m")
    Verdict.objects.create(item=item, criterion=criterion, judge=judge, label="yes")
    HumanLabel.objects.create(item=item, criterion=criterion, rater="ann", label="yes")
    draw = SplitDraw.objects.create(project=project, seed=1, held_out_fraction=0.5)
    ItemSplit.objects.create(item=item, draw=draw, split="calibration")
    held_out_access_log(actor=admin_user, project=project, what="figures")
    GateSetting.objects.create(project=project, criterion="faithful")
    ProjectBudget.objects.create(project=project, monthly_usd=10)
    DashboardSnapshot.objects.create(project=project, fingerprint="f", payload={})
    bucket = FailureBucket.objects.create(project=project, name="bucket")
    FailureTag.objects.create(item=item, criterion="faithful", judge="p/m", bucket=bucket)
    config = JudgeConfig.objects.create(project=project, name="reader")
    version = JudgeVersion.objects.create(
        config=config, number=1, provider="p", model="m", prompt="x", prompt_sha256="0"
    )
    run = Run.objects.create(project=project, version=version)
    Call.objects.create(run=run, item=item, fingerprint=slug, status="done", request={})
    PanelMember.objects.create(
        panel=Panel.objects.create(project=project, name="panel"), judge=judge, version=None
    )
    return project


def _build_world() -> World:
    demo, other = _project_rows("demo"), _project_rows("other")
    insider = _every_permission(UserFactory(username="insider", is_staff=True))
    Membership.objects.create(project=demo, user=insider, role=Role.ADMIN)
    outsider = _every_permission(UserFactory(username="outsider", is_staff=True))
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    # Rows of no project: superusers' only.
    ModelPrice.objects.create(provider="p", model="m")
    token_create(actor=root, name="ci")
    Group.objects.create(name="operators")
    seen = {"user_agent": "ua", "ip_address": "10.0.0.1", "username": "april", "http_accept": ""}
    AccessAttempt.objects.create(
        **seen, path_info="/", get_data="", post_data="", failures_since_start=1
    )
    AccessLog.objects.create(**seen, path_info="/")
    AccessFailureLog.objects.create(**seen, path_info="/", locked_out=False)
    DBTaskResult.objects.create(
        args_kwargs={}, task_path="x", backend_name="default", run_after=timezone.now(),
        exception_class_path="", traceback="",
    )  # fmt: skip
    return World(demo, other, insider, outsider, root)


@pytest.fixture(scope="module")
def _world(module_db):
    return module_db.build(_build_world)


world = per_test_copy("_world")


def _request(user):
    request = RequestFactory().get("/admin/")
    request.user = user
    return request


def test_every_registered_admin_is_scoped():
    unscoped = [label for label, (_, a) in zip(IDS, REGISTERED) if not isinstance(a, Scoped)]
    assert not unscoped, f"admins with no project scope: {unscoped}"
    for model, model_admin in REGISTERED:
        if isinstance(model_admin, ProjectScoped):
            model.objects.filter(**{f"{model_admin.project_path}__in": Project.objects.all()})


@pytest.mark.parametrize("model, model_admin", REGISTERED, ids=IDS)
def test_staff_in_no_project_see_and_open_nothing(client, world, model, model_admin):
    rows = list(model._default_manager.order_by("pk").values_list("pk", flat=True))
    assert not model_admin.get_queryset(_request(world.outsider)).exists()
    client.force_login(world.outsider)
    info = (model._meta.app_label, model._meta.model_name)
    listed = client.get(reverse("admin:{}_{}_changelist".format(*info)))
    assert listed.status_code in (200, 403)
    if listed.status_code == 200:
        assert listed.context["cl"].result_count == 0
        page = listed.content.decode()
        assert world.demo.name not in page and world.other.name not in page
    for pk in {rows[0], rows[-1]} if rows else ():
        opened = client.get(reverse("admin:{}_{}_change".format(*info), args=[pk]))
        assert opened.status_code in (302, 403), f"{model._meta.label} {pk} opened"


@pytest.mark.parametrize("model, model_admin", REGISTERED, ids=IDS)
def test_a_project_admin_sees_exactly_their_projects_rows(client, world, model, model_admin):
    client.force_login(world.insider)
    info = (model._meta.app_label, model._meta.model_name)
    listed = client.get(reverse("admin:{}_{}_changelist".format(*info)))
    assert world.other.name not in listed.content.decode()  # nor in a list filter
    seen = model_admin.get_queryset(_request(world.insider))
    everything = model_admin.get_queryset(_request(world.root))
    assert everything.count() == model._default_manager.count()
    if isinstance(model_admin, SuperuserOnly):
        assert not seen.exists()
    elif isinstance(model_admin, ProjectScoped):
        path = model_admin.project_path
        ours = model._default_manager.filter(**{f"{path}__in": [world.demo.pk]})
        assert set(seen.values_list("pk", flat=True)) == set(ours.values_list("pk", flat=True))
        theirs = model._default_manager.filter(**{f"{path}__in": [world.other.pk]})
        theirs = theirs.exclude(pk__in=ours.values("pk"))  # a document both cite is ours too
        assert theirs.exists() and not seen.filter(pk__in=theirs.values("pk")).exists()
    else:  # users: the members of their project
        members = set(world.demo.memberships.values_list("user", flat=True))
        assert set(seen.values_list("pk", flat=True)) == members


def test_every_kind_of_row_is_in_the_world(world):
    """The walks above prove something only for tables with rows: each must have some."""
    empty = [
        label for label, (model, _) in zip(IDS, REGISTERED) if not model._default_manager.exists()
    ]
    assert not empty, f"no row of: {empty}"


def _item_change(client, user, item, title):
    client.force_login(user)
    return client.post(reverse("admin:reviews_item_change", args=[item.pk]), {"title": title})


def test_another_projects_item_title_and_any_documents_geometry_stay(client, world):
    theirs = world.other.items.get()
    assert _item_change(client, world.outsider, theirs, "renamed").status_code == 302
    assert _item_change(client, world.insider, theirs, "renamed").status_code == 302
    theirs.refresh_from_db()
    assert theirs.title != "renamed"
    ours = world.demo.items.get()
    assert _item_change(client, world.insider, ours, "renamed").status_code == 302
    ours.refresh_from_db()
    assert ours.title == "renamed"  # their own project's item, as before
    document = Document.objects.filter(sources__item=ours).get()
    for user in (world.outsider, world.insider, world.root):
        client.force_login(user)
        url = reverse("admin:reviews_document_change", args=[document.pk])
        client.post(url, {"page_sizes": "[[1, 1]]", "original_name": "x.pdf"})
    document.refresh_from_db()
    assert document.page_sizes != [[1, 1]] and document.original_name != "x.pdf"


def test_a_project_admin_adds_a_member_by_username_only_to_their_project(client, world):
    newcomer = UserFactory(username="newcomer")
    client.force_login(world.insider)
    url = reverse("admin:reviews_membership_add")
    form = client.get(url).content.decode()
    assert "outsider" not in form and world.other.name not in form  # no list of users or projects
    for project in (world.other, world.demo):
        client.post(url, {"project": project.pk, "user": "newcomer", "role": Role.RATER})
    assert list(newcomer.memberships.values_list("project__slug", flat=True)) == ["demo"]


@pytest.mark.parametrize(
    "url, data, model",
    [
        ("admin:reviews_slice_add", {"name": "mine"}, Slice),
        ("admin:judging_failurebucket_add", {"name": "mine", "position": 0}, FailureBucket),
        ("admin:judging_gatesetting_add", GATE, GateSetting),
        ("admin:judging_panel_add", {"name": "mine", "rule": "majority"}, Panel),
    ],
)
def test_a_project_admin_adds_configuration_only_to_their_project(client, world, url, data, model):
    if model is Panel:  # one member: the project's imported judge
        data = {
            **data,
            "members-TOTAL_FORMS": 1,
            "members-INITIAL_FORMS": 0,
            "members-0-judge": world.demo.judges.get().pk,
        }
    client.force_login(world.insider)
    form = client.get(reverse(url)).content.decode()
    assert world.other.name not in form  # the project select offers only theirs
    before = model.objects.count()
    refused = client.post(reverse(url), {**data, "project": world.other.pk})
    assert refused.status_code == 200 and model.objects.count() == before
    assert client.post(reverse(url), {**data, "project": world.demo.pk}).status_code == 302
    assert model.objects.count() == before + 1


def test_view_on_site_names_no_project_one_may_not_see(client, world):
    """Django's `/admin/r/<type>/<id>/` redirected any staff user to the row's page: trying ids
    named every project's slug."""
    from django.contrib.contenttypes.models import ContentType

    kind = ContentType.objects.get_for_model(Project).pk
    other, demo = f"/admin/r/{kind}/{world.other.pk}/", f"/admin/r/{kind}/{world.demo.pk}/"
    client.force_login(world.outsider)
    assert client.get(other).status_code == 404 and client.get(demo).status_code == 404
    client.force_login(world.insider)
    assert client.get(other).status_code == 404
    assert client.get(demo)["Location"].endswith("/p/demo/")
    assert client.get(f"/admin/r/{kind}/0000{world.demo.pk}/")["Location"].endswith("/p/demo/")
    assert client.get(f"/admin/r/0000{kind}/{world.other.pk}/").status_code == 404
    assert client.get(f"/admin/r/{kind}/not-an-id/").status_code == 404
    assert client.get(f"/admin/r/{'9' * 25}/1/").status_code == 404
    client.force_login(world.root)
    assert client.get(other)["Location"].endswith("/p/other/")
