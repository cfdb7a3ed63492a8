"""`insert_rows` stores what the ORM stores, on SQLite (executemany) and on PostgreSQL (COPY
text written by hand): escapes, JSON, NULL, datetimes and choices come back unchanged."""

import json

import pytest
from django.db import connection
from django.utils import timezone

from reviews.models import Claim, Event, EventKind, Item, ItemStatus
from reviews.services.imports.bulk_insert import (
    insert_lines,
    insert_rows,
    made_lines,
    pks_by_key,
    rows_where_any,
)
from reviews.services.imports.copy_text import JsonText
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db

AWKWARD = "tab\there\nnew line\r\nback\\slash \\N \\t 'quote\" ünïcödé ✓ \x01"


def test_values_come_back_as_written():
    project = ProjectFactory()
    now = timezone.now()
    metadata = {"text": AWKWARD, "nested": [1, 2.5, None, True, {"k": "\\"}]}
    written = insert_rows(
        Item,
        ("external_id", "title", "input", "output", "expected", "metadata"),
        [
            ("a", AWKWARD, {"q": AWKWARD}, AWKWARD, None, metadata),
            ("b", "", "plain string input", "", "\\N", {}),
        ],
        project_id=project.pk,
        status=ItemStatus.OPEN,
        overlap=None,
        created_at=now,
        updated_at=now,
    )
    assert written == 2
    a, b = Item.objects.filter(project=project).order_by("external_id")
    assert (a.title, a.input, a.output, a.expected, a.metadata) == (
        AWKWARD,
        {"q": AWKWARD},
        AWKWARD,
        None,
        metadata,
    )
    assert (b.title, b.input, b.output, b.expected, b.metadata) == (
        "",
        "plain string input",
        "",
        "\\N",
        {},
    )
    assert a.status == ItemStatus.OPEN and a.overlap is None and a.created_at == now

    insert_rows(
        Event,
        ("item_id", "data"),
        [(a.pk, {"file": AWKWARD})],
        kind=EventKind.IMPORTED,
        created_at=now,
    )
    event = Event.objects.get(item=a)
    assert (event.kind, event.data) == (EventKind.IMPORTED, {"file": AWKWARD})

    # Already-dumped JSON is written as it is, and reads back as the value it dumps.
    data = {"file": AWKWARD, "record": "line 2"}
    rows = [(b.pk, JsonText(json.dumps(data)))]
    insert_rows(Event, ("item_id", "data"), rows, kind=EventKind.IMPORTED, created_at=now)
    assert Event.objects.get(item=b).data == data


@pytest.mark.skipif(connection.vendor != "postgresql", reason="COPY text made ahead")
def test_lines_made_ahead_store_what_insert_rows_stores(transactional_db):
    """`made_lines` then `insert_lines`, with an id put in front of the lines chosen, stores
    the values `insert_rows` stores: escapes, JSON, NULL, choices and datetimes."""
    from reviews.services.imports.background_copies import BackgroundCopies

    project = ProjectFactory()
    now = timezone.now()
    columns = ("external_id", "title", "input", "output", "expected", "metadata")
    rows = [
        ("a", AWKWARD, {"q": AWKWARD}, AWKWARD, None, {"n": [1, 2.5, None, True]}),
        ("skipped", "", None, None, None, {}),
        ("b", "", "plain", "", "\\N", {}),
    ]
    constants = {"project_id": project.pk, "status": ItemStatus.OPEN, "overlap": None,
                 "created_at": now, "updated_at": now}  # fmt: skip
    made = made_lines(Item, columns, rows, **constants)
    assert made.columns == (*columns, *constants) and len(made.lines) == 3
    chosen = [f"{pk}\t{made.lines[n]}" for pk, n in ((900001, 0), (900002, 2))]
    copies = BackgroundCopies(connection)
    try:
        assert insert_lines(Item, ("id", *made.columns), chosen, copies=copies) == 2
        copies.wait()
    finally:
        copies.close()
    other = ProjectFactory()
    insert_rows(Item, columns, [rows[0], rows[2]], **(constants | {"project_id": other.pk}))

    def stored(project):
        fields = (*columns, "status", "overlap", "created_at", "updated_at")
        return list(
            Item.objects.filter(project=project).order_by("external_id").values_list(*fields)
        )

    assert stored(project) == stored(other)
    assert sorted(Item.objects.filter(project=project).values_list("pk", flat=True)) == [
        900001,
        900002,
    ]


def test_rows_keep_their_order_and_any_value_type():
    """Ids follow the rows' order (SQLite reads ints, str and None from one JSON parameter);
    a float, which JSON might not carry back to the bit, goes in as the driver binds it."""
    project = ProjectFactory()
    now = timezone.now()
    names = ["e", "d", "c", "b", "a"]
    insert_rows(
        Item,
        ("external_id", "title", "expected", "revision"),
        [(name, name.upper(), None, n) for n, name in enumerate(names, start=1)],
        project_id=project.pk,
        metadata={},
        status=ItemStatus.OPEN,
        overlap=None,
        created_at=now,
        updated_at=now,
    )
    items = list(Item.objects.filter(project=project).order_by("pk"))
    assert [(i.external_id, i.title, i.expected, i.revision) for i in items] == [
        (name, name.upper(), None, n) for n, name in enumerate(names, start=1)
    ]
    confidences = [0.1 + 0.2, 1 / 3, None]
    insert_rows(
        Claim,
        ("item_id", "path", "confidence"),
        [(items[0].pk, f"$.p{n}", c) for n, c in enumerate(confidences)],
        value=None,
        providers=[],
        quote="",
        position=0,
    )
    stored = Claim.objects.filter(item=items[0]).order_by("pk").values_list("confidence", flat=True)
    assert list(stored) == confidences


def test_rows_where_any_reads_rows_by_one_array_of_values():
    project = ProjectFactory()
    now = timezone.now()
    insert_rows(
        Item,
        ("external_id", "title", "input", "output", "expected", "metadata"),
        [(f"k{n}", f"t{n}", None, "", None, {}) for n in range(5)],
        project_id=project.pk,
        status=ItemStatus.OPEN,
        overlap=None,
        created_at=now,
        updated_at=now,
    )
    pks = pks_by_key(Item, "external_id", ["k1", "k3", "nope"], project=project.pk)
    assert pks.keys() == {"k1", "k3"}
    with_revision = pks_by_key(Item, "external_id", ["k1"], also=("revision",), project=project.pk)
    assert with_revision == {"k1": (pks["k1"], 1)}
    rows = rows_where_any(Item, ("external_id", "created_at"), "id", set(pks.values()))
    # Datetimes aware on both databases, as the ORM gives them.
    assert sorted(rows) == [("k1", now), ("k3", now)]
    assert rows_where_any(Item, ("external_id",), "id", set()) == []
