"""A TRUNCATE of the item or slice table that leaves item-slice links is refused (PostgreSQL):
the links have no foreign keys since 0018, so CASCADE does not reach them
(reviews/link_triggers.py)."""

from django.db import migrations

from reviews.link_triggers import truncate_operation


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0018_item_slice_links_checked_per_statement"),
    ]

    operations = [truncate_operation()]
