"""The demo: a project for every role with generated evidence, loaded through the importer.

``load`` (users, project, import), ``files`` (the review files) and ``documents`` (the statement
PDF and receipt PNG, with where their key strings are). Demo data only: the
`load_demo` command and the tests import it, nothing else.
"""

from reviews.demo.load import DEMO_USERS, demo_load

__all__ = ["DEMO_USERS", "demo_load"]
