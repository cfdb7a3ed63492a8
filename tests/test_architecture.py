"""Which way imports point (docs/architecture.md), checked on the source with `ast`.

Every `import` counts, wherever it stands (inside a function, under `if TYPE_CHECKING:`): a lazy
import still ties two modules together. Migrations are left out (they are history).
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("evalsite", "reviews", "judging")
PURE = ("formats", "metrics", "providers")  # no models, no database


@cache
def project_modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if "migrations" in parts:
                continue
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    modules = project_modules()
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # relative import
        package = module.split(".")
        if modules[module].name != "__init__.py":
            package.pop()
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, base] if base else package)
    # `from a.b import c`: the module a.b.c if there is one, else a name of a.b.
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """module -> the project modules it imports (the nearest enclosing module of a name)."""
    modules = project_modules()
    graph = {}
    for module, path in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _targets(module, node):
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in modules and target != module:
                    edges.add(target)
        graph[module] = frozenset(edges)
    return graph


def cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _arrows(source, target) -> list[str]:
    return [
        f"{module} -> {imported}"
        for module, imports in sorted(import_graph().items())
        for imported in sorted(imports)
        if source(module.split(".")) and target(imported.split("."))
    ]


def test_the_walker_sees_the_layers():
    graph = import_graph()
    assert "reviews.models" in graph["reviews.services.rating.answers"]
    assert "judging.metrics" in graph["judging.reports.agreement.build"]
    assert len(graph) > 100


def test_cycles_are_found():
    assert cycles({"a": frozenset("b"), "b": frozenset("c"), "c": frozenset("a")}) == [
        ["a", "b", "c"]
    ]
    assert cycles({"a": frozenset("b"), "b": frozenset()}) == []


def test_no_import_cycles():
    assert cycles(import_graph()) == []


@pytest.mark.parametrize(
    ("rule", "source", "target"),
    [
        (
            "reviews never imports judging",
            lambda m: m[0] == "reviews",
            lambda m: m[0] == "judging",
        ),
        (
            "formats, metrics and providers import no models",
            lambda m: any(part in PURE for part in m),
            lambda m: "models" in m or m[-1].startswith("models_"),
        ),
        (
            "services never import views or tasks",
            lambda m: "services" in m,
            lambda m: "views" in m or m[-1] == "tasks" or "api" in m,
        ),
        (
            "selectors and presenters import no views, api or tasks",
            lambda m: m[-1].startswith("selectors") or m[-1] == "presenters",
            lambda m: "views" in m or m[-1] == "tasks" or "api" in m,
        ),
        (
            "presenters read no database (they shape figures a view already has)",
            lambda m: m[-1] == "presenters",
            lambda m: "models" in m or m[-1].startswith(("models_", "selectors")),
        ),
        (
            "models import no services, views or tasks",
            lambda m: "models" in m,
            lambda m: any(part in ("services", "views", "api", "tasks") for part in m),
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_imports_point_one_way(rule, source, target):
    assert [a for a in _arrows(source, target) if a not in KNOWN] == [], rule


# Arrows known to break a rule, each to be removed (not added to).
KNOWN: set[str] = set()


def test_known_exceptions_still_exist():
    """An exception that no longer happens is taken off the list."""
    arrows = {f"{m} -> {i}" for m, imports in import_graph().items() for i in imports}
    assert arrows >= KNOWN


def test_services_folders_stay_small():
    """Services are grouped by subdomain: no folder holds more than 20 modules side by side."""
    crowded = {}
    for app in ("reviews", "judging"):
        services = ROOT / app / "services"
        for folder in [services, *(p for p in services.rglob("*") if p.is_dir())]:
            if folder.name == "__pycache__":
                continue
            modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
            if len(modules) > 20:
                crowded[str(folder.relative_to(ROOT))] = len(modules)
    assert crowded == {}


# What judging may use of reviews: its tables, services, reads, access rules, signals and hooks
# (`item_hooks`: the item list's filters and bulk actions; `navigation`: the project pages judging
# adds), and the public interfaces of its two pure packages (`reviews.evidence` is its `__init__`).
REVIEWS_FOR_JUDGING = (
    "models",
    "services",
    "selectors",
    "access",
    "signals",
    "item_hooks",
    "navigation",
    "formats",
)


def _reviews_internal(module: list[str]) -> bool:
    if module[0] != "reviews":
        return False
    if module == ["reviews", "evidence"]:
        return False
    return len(module) < 2 or not module[1].startswith(REVIEWS_FOR_JUDGING)


def test_judging_uses_only_what_reviews_offers_it():
    """Shared infrastructure (admin base, posting helpers, command base, converters, API errors,
    raw rows, history triggers) lives in evalsite/, not in reviews' internals."""
    arrows = _arrows(lambda m: m[0] == "judging", _reviews_internal)
    assert [a for a in arrows if a not in JUDGING_KNOWN] == []
    assert set(arrows) >= JUDGING_KNOWN, "an exception that no longer happens is taken off"


# The criteria page (judging: it lists judging's Criterion rows) shows reviews' question builder;
# the builder's context belongs in a public reviews module before this arrow goes.
JUDGING_KNOWN = {"judging.views.questions -> reviews.views.questions"}


def test_one_registration_function():
    """Formats, record kinds, question sources and the question definer all go through the import
    registry's one way in: no second registry grows beside it."""
    found = sorted(
        f"{module}.{node.name}"
        for module, path in project_modules().items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("register_")
    )
    assert found == ["reviews.services.imports.registry.register_import"]


WRITES = {
    "create",
    "bulk_create",
    "update",
    "bulk_update",
    "delete",
    "get_or_create",
    "update_or_create",
}


def _model_writes(tree: ast.AST, models: set[str]) -> list[str]:
    """`Model.objects....write(...)` calls whose chain starts at one of `models`."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in WRITES:
            continue
        root = node.func.value
        while isinstance(root, ast.Attribute | ast.Call):
            root = root.func if isinstance(root, ast.Call) else root.value
        if isinstance(root, ast.Name) and root.id in models:
            found.append(f"{root.id}….{node.func.attr}")
    return found


def test_judging_writes_no_reviews_row_itself():
    """Reviews owns its tables: judging asks reviews' services (items_pairwise_keep,
    slices_critical_set, items_upsert, ...) instead of writing through reviews' models."""
    found = []
    for module, path in project_modules().items():
        if module.split(".")[0] != "judging":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        models = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("reviews.models")
            for alias in node.names
        }
        found += [f"{module}: {write}" for write in _model_writes(tree, models)]
    assert found == []


def test_the_write_finder_sees_a_write():
    tree = ast.parse("Slice.objects.filter(name='x').update(critical=True)\nItem.objects.get()")
    assert _model_writes(tree, {"Slice", "Item"}) == ["Slice….update"]


def _hand_reads(tree: ast.AST) -> list[str]:
    """`request.POST`/`request.GET` used other than whole: passed to a call (a form, a ninja
    schema, a helper that hands it to a form), copied, or chosen whole (`x if c else None`,
    `request.GET or defaults`) into a name. `.get(...)`, `[...]`, `in` are reads by hand."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Attribute)
            and node.attr in ("POST", "GET")
            and isinstance(node.value, ast.Name)
            and node.value.id == "request"
        ):
            continue
        whole, parent = node, parents.get(node)
        while isinstance(parent, ast.BoolOp) or (
            isinstance(parent, ast.IfExp) and whole is not parent.test
        ):
            whole, parent = parent, parents.get(parent)
        passed = isinstance(parent, ast.keyword) or (
            isinstance(parent, ast.Call) and whole in parent.args
        )
        copied = isinstance(parent, ast.Attribute) and parent.attr == "copy"
        named = isinstance(parent, ast.Assign) and whole is parent.value
        if not (passed or copied or named):
            found.append(f"line {node.lineno}: {ast.unparse(parent or node)}")
    return found


def _in_views(finder) -> list[str]:
    """What `finder` finds in every view module (pages and the ninja API), named by module."""
    return [
        f"{module} {hit}"
        for module, path in project_modules().items()
        if {"views", "api"} & set(module.split("."))
        for hit in finder(ast.parse(path.read_text(encoding="utf-8")))
    ]


def test_views_read_requests_through_forms():
    """Every view reads request data through a Django form (or a ninja schema): a value that
    does not parse is the form's clear error, never a 500 or a silent default."""
    assert _in_views(_hand_reads) == []


def test_the_hand_read_finder_sees_hand_reads():
    source = """
role = request.POST.get("role")
page = request.GET["page"]
asked = "a" in request.GET
form = Form(request.POST if request.method == "POST" else None)
other = Form(data=request.GET or None)
kept = request.GET.copy()
data = request.POST if request.method == "POST" else None
"""
    assert sorted(r.split(":")[0] for r in _hand_reads(ast.parse(source))) == [
        "line 2",
        "line 3",
        "line 4",
    ]


def _url_names(path: Path) -> set[str]:
    """The `name=` of every `path(...)` in a urls module."""
    return {
        keyword.value.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "name" and isinstance(keyword.value, ast.Constant)
    }


URL_TAG = re.compile(r"""\{%\s*url\s+['"]([\w:-]+)['"]""")


def test_reviews_templates_name_no_judging_url():
    """Reviews' pages link to judging's through the navigation registry judging fills
    (reviews/navigation.py, judging/apps.py), never by judging's URL names."""
    judging_names = _url_names(ROOT / "judging" / "urls.py")
    assert {"project_dashboard", "questions", "score_list"} <= judging_names
    found = sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for path in (ROOT / "templates" / "reviews").rglob("*.html")
        for name in URL_TAG.findall(path.read_text(encoding="utf-8"))
        if name in judging_names or name.startswith("judging:")
    )
    assert found == []


QUERYSET_METHODS = {
    "filter",
    "exclude",
    "order_by",
    "select_related",
    "prefetch_related",
    "values_list",
    "annotate",
    "aggregate",
}


def _manager_queries(tree: ast.AST) -> list[str]:
    """`Model.objects` used anywhere, or a queryset built in place (`item.events.filter(...)`,
    `.order_by(...)`, ...): a query written where it is used."""
    return [
        f"line {node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and (_is_manager(node) or node.attr in QUERYSET_METHODS)
    ]


def _is_manager(node: ast.Attribute) -> bool:
    """`Model.objects` or `get_user_model().objects` (not a schema's field named `objects`)."""
    owner = node.value
    model = isinstance(owner, ast.Name) and owner.id[:1].isupper()
    return node.attr == "objects" and (model or isinstance(owner, ast.Call))


def test_views_query_through_selectors():
    """Views ask selectors (or services) for rows; no query is built in a view."""
    assert _in_views(_manager_queries) == []


BARE_STATUS = re.compile(r"""\b\w*(?:status|decision|split)\s*(?:==|!=|in)\s*['"]""")


def test_templates_compare_enums_not_strings():
    """`q.status != QuestionStatus.OPEN`, not `!= "open"` (reviews/context_processors.py and
    judging/context_processors.py give the templates the choices; a claim decision's badge is
    `claim_badge`): a renamed state cannot be missed silently."""
    found = [
        f"{path.relative_to(ROOT)}:{number}: {match.group(0)}"
        for app in ("reviews", "judging")
        for path in (ROOT / "templates" / app).rglob("*.html")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for match in BARE_STATUS.finditer(line)
    ]
    assert found == []


ROLE_COMBINATION = re.compile(r"access\.is_\w+\s+(?:and|or)\s+(?:not\s+)?access\.is_\w+")


def test_reviews_templates_get_decisions_not_role_combinations():
    """A page shows by one decision the access object computes (`access.is_overseer`,
    `access.can_export`, `can_approve`, ...), never by roles combined in the template."""
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in (ROOT / "templates" / "reviews").rglob("*.html")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ROLE_COMBINATION.search(line)
    ]
    assert found == []
