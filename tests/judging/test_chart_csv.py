"""A chart's CSV shows labels from imported files as text, never as a spreadsheet formula."""

import csv
import io

from django.urls import reverse

from judging.services.dashboard import dashboard_refresh
from reviews.models import Role
from reviews.services.imports.pipeline import file_import
from tests.factories import member
from tests.judging.helpers import (
    criterion_record,
    human_record,
    item_record,
    verdict_record,
    write_jsonl,
)

BAD = '=HYPERLINK("http://evil.example","x")'


def test_chart_csv_shows_formula_labels_as_text(client, project, tmp_path):
    records = [criterion_record(name="c", labels=[BAD, "ok"], positive="ok")]
    for n in range(6):
        label = BAD if n % 2 else "ok"
        records += [
            item_record(f"f{n}"),
            human_record(f"f{n}", "ana", label, criterion="c"),
            verdict_record(f"f{n}", label, criterion="c", judge={"provider": "p", "model": "m"}),
        ]
    path = write_jsonl(tmp_path / "f.jsonl", records)
    file_import(actor=None, project=project, path=path, format="jsonl")
    dashboard_refresh(project=project)
    client.force_login(member(project, Role.ADMIN))
    kwargs = {"slug": project.slug, "kind": "confusion", "name": "c", "fmt": "csv"}
    response = client.get(reverse("dashboard_chart", kwargs=kwargs), {"judge": "p/m"})
    assert response.status_code == 200
    cells = [cell for row in csv.reader(io.StringIO(response.content.decode())) for cell in row]
    assert f"'{BAD}" in cells and BAD not in cells
