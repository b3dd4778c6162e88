"""Doors read through selectors: no ORM query in a page, API view, command or task.

The rule, checked on the syntax tree of every door module (no database):

1. ``X.objects`` appears only as ``X.objects.get(...)`` — a door fetches the one object it acts on (or calls
   ``get_object_or_404(Model, ...)``, which takes the model, not a manager or queryset).
2. No call of a method that only a queryset or manager answers, on anything: ``filter exclude annotate
   aggregate values_list order_by select_related prefetch_related iterator in_bulk only defer distinct all
   none first last earliest latest get_or_create update_or_create bulk_create bulk_update select_for_update
   raw using``.
3. The names a queryset shares with other types count only in their ORM shape: ``.values()`` with arguments
   (``dict.values()`` takes none), ``.count()`` and ``.exists()`` with none (``str.count`` and ``list.count``
   take one); ``.update(...)`` and ``.delete()`` on a manager or a queryset method's result
   (``context.update(form=form)`` is a dict's; ``X.objects.update(...)`` and ``rows.filter(...).delete()`` are
   the database's).
4. No ``get_list_or_404``.

A door may still fetch its one object: ``X.objects.get(...)``, ``get_object_or_404(X, ...)`` or
``get_object_or_404(related_manager, ...)``, with ``select_related``/``prefetch_related`` chained onto the manager
for what the page shows of it. Writes through the object itself (``obj.save()``, a form's ``save()``) are not
read here.

Everything else a door needs from the database is a selector (reads) or a service (writes) named for its
question. No door is excepted.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DOOR_ROOTS = (
    "annotation/views",
    "annotation/api",
    "annotation/management/commands",
    "annotation/tasks.py",
    "audits/views",
    "audits/api",
    "audits/management/commands",
    "audits/tasks.py",
    "edufair_web/accounts/views.py",
    "edufair_web/accounts/api",
    "edufair_web/accounts/management/commands",
    "edufair_web/accounts/tasks.py",
)

QUERY_ONLY_METHODS = frozenset(
    "filter exclude annotate aggregate values_list order_by select_related prefetch_related iterator in_bulk "
    "only defer distinct all none first last earliest latest get_or_create update_or_create bulk_create "
    "bulk_update select_for_update raw using".split()
)

# What a door may chain onto the manager when it fetches its one object.
FETCH_HELPERS = frozenset({"select_related", "prefetch_related"})


def door_files() -> list[Path]:
    files = []
    for entry in DOOR_ROOTS:
        path = ROOT / entry
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(sorted(path.rglob("*.py")))
    return files


def _is_queryset(node: ast.AST) -> bool:
    """``X.objects``, or the result of a method only a queryset or manager has."""
    if isinstance(node, ast.Attribute):
        return node.attr == "objects"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in QUERY_ONLY_METHODS


def _shape_breaches(call: ast.Call, name: str) -> bool:
    positional, keywords = call.args, call.keywords
    if name in QUERY_ONLY_METHODS:
        return True
    if name == "values":
        return bool(positional or keywords)
    if name in ("count", "exists"):
        return not positional and not keywords
    if name in ("update", "delete"):
        return _is_queryset(call.func.value)
    return False


def _fetch_chain(node: ast.AST, allowed: set[int]) -> None:
    """Mark ``X.objects[.select_related(...)|.prefetch_related(...)]*`` under a fetch of one object as allowed."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FETCH_HELPERS:
        allowed.add(id(node))
        node = node.func.value
    if isinstance(node, ast.Attribute) and node.attr == "objects":
        allowed.add(id(node))


def breaches(source: str) -> list[tuple[int, str]]:
    """(line, what) for each line of ``source`` that queries the database beyond fetching one object."""
    tree = ast.parse(source)
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            _fetch_chain(node.func.value, allowed)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "get_object_or_404":
            if node.args:
                _fetch_chain(node.args[0], allowed)
    found: dict[int, list[str]] = {}
    for node in ast.walk(tree):
        if id(node) in allowed:
            continue
        what = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if _shape_breaches(node, node.func.attr):
                what = f".{node.func.attr}(...)"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "get_list_or_404":
            what = "get_list_or_404(...)"
        elif isinstance(node, ast.Attribute) and node.attr == "objects":
            what = f"{ast.unparse(node)}"
        if what:
            found.setdefault(node.lineno, []).append(what)
    return [(line, " ".join(sorted(set(whats)))) for line, whats in sorted(found.items())]


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_door_list_is_not_empty():
    names = {_relative(path) for path in door_files()}
    assert "annotation/views/labelling.py" in names
    assert "audits/api/views_runs.py" in names


@pytest.mark.parametrize("path", door_files(), ids=_relative)
def test_door_reads_through_selectors(path):
    found = breaches(path.read_text(encoding="utf-8"))
    lines = "\n".join(f"  line {line}: {what}" for line, what in found)
    assert not found, f"{_relative(path)} queries the database; move the query into a selector or service:\n{lines}"


PLANTED = """
def view(request, pk):
    stage = get_object_or_404(Stage.objects.select_related("project"), pk=pk)
    item = get_object_or_404(stage.project.items, pk=request.GET["item"])
    project = Project.objects.select_related("owner").get(pk=stage.project_id)
    names = {"a": 1}.values()
    total = "abc".count("a")
    options = {}
    options.update({"x": 1})
    options.update(form=None)
    items = stage.items.filter(done=True)  # breach
    rows = Label.objects.all()  # breach
    manager = Label.objects  # breach
    n = stage.labels.count()  # breach
    Label.objects.filter(stage=stage).update(final=None)  # breach
    Thread.objects.all().delete()  # breach
    stage.items.values("pk")  # breach
    get_object_or_404(Stage.objects.filter(open=True), pk=pk)  # breach
    first = stage.items.order_by("pk").first()  # breach
    get_list_or_404(Item, project=project)  # breach
    return render(request, "x.html", {"items": items, "rows": rows, "manager": manager})
"""


def test_the_rule_catches_planted_queries_and_spares_non_orm_code():
    marked = [number for number, line in enumerate(PLANTED.split("\n"), start=1) if line.endswith("# breach")]
    assert [line for line, _what in breaches(PLANTED)] == marked
