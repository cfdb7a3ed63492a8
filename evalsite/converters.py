"""The URL converter of row ids, for reviews' and judging's URLs alike."""

from django.urls import register_converter
from django.urls.converters import get_converters


class RowId:
    """A row's id: at most 18 digits, within the database's 64-bit id columns. A longer number
    is no page (404): hand-written SQL would hand it to the driver as is, and SQLite cannot
    bind an integer past 64 bits (a 500)."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value) -> str:
        return str(value)


def register() -> None:
    """`<id:name>` in a URL pattern; either app's URLs may be read first."""
    if "id" not in get_converters():
        register_converter(RowId, "id")
