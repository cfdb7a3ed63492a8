"""Names the calibration dashboard shows come from imported files: criterion, rater and judge
names with markup or header-breaking characters are escaped on every page and never break a
download's header."""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging.services.dashboard import dashboard_refresh
from reviews.models import Role
from reviews.services.imports.pipeline import file_import
from tests.factories import member
from tests.judging.helpers import (
    JUDGE,
    criterion_record,
    human_record,
    item_record,
    verdict_record,
    write_jsonl,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_fresh_cache")]


def _hostile_project(project, folder, criterion: str, judge: dict):
    records = [criterion_record(name=criterion, text="<script>alert(1)</script>")]
    for n in range(6):
        records += [
            item_record(f"h{n}"),
            human_record(f"h{n}", "<i>ana</i>", "pass", criterion=criterion),
            verdict_record(
                f"h{n}",
                "pass" if n % 2 else "fail",
                criterion=criterion,
                judge=judge,
                explanation="<img src=x onerror=alert(1)>",
            ),
        ]
    file_import(
        actor=None, project=project, path=write_jsonl(folder / "h.jsonl", records), format="jsonl"
    )
    dashboard_refresh(project=project)


def test_names_from_imported_files_are_escaped_and_never_break_a_header(client, project, tmp_path):
    judge = {"provider": 'evil"co\r\nX-Injected: 1', "model": "<b>m"}
    _hostile_project(project, tmp_path, "<b>bold", judge)
    client.force_login(member(project, Role.ADMIN, Role.ADJUDICATOR))
    slug = project.slug
    for url in (
        reverse("project_dashboard", args=[slug]),
        reverse("dashboard_criterion", args=[slug, "<b>bold"]),
        reverse("dashboard_disagreements", args=[slug]),
        reverse("dashboard_failures", args=[slug]),
    ):
        body = client.get(url).content.decode()
        assert "<b>" not in body and "<script>alert" not in body and "<i>ana" not in body, url
        assert "&lt;b&gt;bold" in body, url
    name = f"{judge['provider']}/{judge['model']}"
    response = client.get(
        reverse(
            "dashboard_chart",
            kwargs={"slug": slug, "kind": "confusion", "name": "<b>bold", "fmt": "csv"},
        ),
        {"judge": name},
    )
    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        f'attachment; filename="{slug}-_b_bold-confusion-evil_co_X-Injected_1_b_m.csv"'
    )
    assert "X-Injected" not in response.headers


def test_a_criterion_name_with_a_slash_does_not_break_the_dashboard(client, project, tmp_path):
    _hostile_project(project, tmp_path, "faithful/strict", JUDGE)
    client.force_login(member(project, Role.ADMIN))
    assert client.get(reverse("project_dashboard", args=[project.slug])).status_code == 200
