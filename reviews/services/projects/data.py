"""The project's data version: one counter that moves whenever the project's evidence does.

Whoever writes evidence rows (items' revisions, resolutions, and, through this service, judging's
verdicts, human labels and splits) calls `project_data_touch` in the same transaction, after
its writes: the counter then commits with them or not at all, and a reader that saw the old
value may have seen the rows too (so at worst a figure is called out of date once too often,
never up to date when it is not). It costs an index look-up to read, whatever the number of
rows, where counting them cost a scan (issue #33: the dashboard's freshness check).
The UPDATE holds the project's row until commit, so callers touch it last.
"""

from django.db import connection

from reviews.models import Project


def project_data_touch(project) -> None:
    """The project's evidence changed in this transaction (call after the writes)."""
    pk = getattr(project, "pk", project)
    # By hand: every submit that settles an item runs it.
    with connection.prepared_cursor() as cursor:
        cursor.execute(
            "UPDATE reviews_project SET data_version = data_version + 1 WHERE id = %s", [pk]
        )


def project_data_version(project) -> int:
    pk = getattr(project, "pk", project)
    return Project.objects.filter(pk=pk).values_list("data_version", flat=True).get()
