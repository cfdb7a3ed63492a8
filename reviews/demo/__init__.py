"""The demo: a project for every role with generated evidence, loaded through the importer.

``load`` (users, project, import: ``demo_load``, ``DEMO_USERS``), ``files`` (the review files)
and ``documents`` (the statement PDF and receipt PNG, with where their key strings are;
importable without Django). Demo data only: the `load_demo` command, the benchmarks and the
tests import it, nothing else.
"""
