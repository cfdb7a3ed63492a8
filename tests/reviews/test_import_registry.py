"""The import registry: one way in (`register_import`), each name taken once, and listings that
do not depend on which app's modules loaded first."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from reviews.formats.detect import Sniffer
from reviews.services.imports import registry
from reviews.services.imports.pipeline import import_formats
from reviews.services.imports.questions import question_kinds
from reviews.services.imports.records import record_schemas
from reviews.services.imports.registry import ImportKind, register_import, registered


def _format(name: str, rank: int, container: str = ""):
    return type(
        f"{name.title()}Importer",
        (),
        {"sniffer": Sniffer(name, bool, container=container), "rank": rank},
    )


@pytest.fixture
def empty(monkeypatch):
    """A registry of its own, so the site's stays as the apps filled it."""
    monkeypatch.setattr(registry, "_TAKEN", {kind: {} for kind in ImportKind})


def test_the_site_registers_every_format_kind_and_source_once():
    assert import_formats() == ("review", "jsonl", "csv", "files", "textflow", "label-studio")
    assert set(record_schemas()) == {
        "item",
        "criterion",
        "verdict",
        "human_label",
        "pairwise_verdict",
    }
    assert question_kinds() == ("criterion",)
    assert list(registered(ImportKind.DEFINER)) == ["criterion"]


def test_a_name_is_taken_once_whoever_asks_again(empty):
    first, second = _format("a", 0), _format("a", 1)
    register_import(ImportKind.FORMAT, "a", first)
    with pytest.raises(ImproperlyConfigured, match="import format 'a' is registered twice"):
        register_import(ImportKind.FORMAT, "a", second)
    with pytest.raises(ImproperlyConfigured, match="registered twice"):
        register_import(ImportKind.FORMAT, "a", first)  # the same module loaded twice: a bug
    assert registered(ImportKind.FORMAT) == {"a": first}

    def source(project, name):
        raise ValueError(name)

    register_import(ImportKind.QUESTIONS, "criterion", source)
    with pytest.raises(ImproperlyConfigured, match="question source 'criterion'"):
        register_import(ImportKind.QUESTIONS, "criterion", lambda project, name: None)
    register_import(ImportKind.RECORDS, "verdict", first)
    with pytest.raises(ImproperlyConfigured, match="record kind 'verdict'"):
        register_import(ImportKind.RECORDS, "verdict", second)


def test_two_formats_cannot_both_read_a_container(empty):
    register_import(ImportKind.FORMAT, "review", _format("review", 0, container="zip"))
    with pytest.raises(ImproperlyConfigured, match="zip files are read by"):
        register_import(ImportKind.FORMAT, "other", _format("other", 1, container="zip"))
    assert list(registered(ImportKind.FORMAT)) == ["review"]


def test_an_empty_name_is_refused(empty):
    with pytest.raises(ImproperlyConfigured, match="needs a name"):
        register_import(ImportKind.RECORDS, "", _format("x", 0))


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 2, 0)])
def test_listings_do_not_depend_on_the_order_of_registration(empty, monkeypatch, order):
    formats = [_format("review", 0), _format("jsonl", 1), _format("textflow", 4)]
    for i in order:
        register_import(ImportKind.FORMAT, formats[i].sniffer.format, formats[i])
        register_import(ImportKind.RECORDS, ("verdict", "item", "criterion")[i], formats[i])
    assert list(registered(ImportKind.FORMAT)) == ["review", "jsonl", "textflow"]
    assert list(registered(ImportKind.RECORDS)) == ["criterion", "item", "verdict"]
