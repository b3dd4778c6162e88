"""The query parameters an API operation's own code reads, found in its source with `ast`, for the test that the
OpenAPI schema declares every one of them.

From the operation's roots (its handler; for a list also the view's `get_queryset`, `filter_queryset`, filter
backends and pagination; for every operation the view's other per-request hooks and its authentication, permission,
throttle, parser and renderer classes), it follows the project's own functions and methods that the request, its
query dict or the view is handed to, and finds

- `q.get("x")`, `q.getlist("x")`, `q["x"]` and `"x" in q`, where `q` is `request.query_params` or `request.GET` or a
  name for it, and "x" a literal, a name bound to literals (a tuple looped over, a module constant, a literal passed
  to a helper such as `query_id(params, "stage")`) or the keys of a class attribute (`self.query_filters`);
- the whole query handed to a serializer (`AnalysisParametersSerializer(data=…)`): its fields are the parameters.

Any other use of the query dict (a key it cannot resolve, the dict iterated, returned, or handed to code it does not
follow) is reported as unresolved, so a new way of reading a parameter fails the test instead of going unseen.

A viewset's detail operations reach its `get_queryset` only through DRF's `get_object`, which is not followed: a
filter read there is the list's. What it cannot see: a serializer reading `self.context["request"].query_params`,
and DRF's own parameters (pages, `?format=`), which drf-spectacular declares itself.
"""

import ast
import builtins
import functools
import inspect
import textwrap
import types
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from rest_framework.serializers import BaseSerializer

PROJECT_ROOT = Path(settings.BASE_DIR).resolve()
QUERY_ATTRIBUTES = ("query_params", "GET")
KEY_READS = ("get", "getlist")
WHOLE_VIEWS = ("items", "keys", "values", "lists", "copy", "dict")  # the dict again, as a whole
# What DRF calls on every request, and where a view may read the request before (or besides) its handler.
EVERY_REQUEST_HOOKS = (
    "initial",
    "get_permissions",
    "get_throttles",
    "get_authenticators",
    "get_parsers",
    "get_renderers",
    "get_serializer_class",
    "get_serializer_context",
    "get_serializer",
    "perform_content_negotiation",
)
LIST_HOOKS = ("get_queryset", "filter_queryset", "paginate_queryset", "get_paginated_response")
EVERY_REQUEST_COLLABORATORS = (
    "authentication_classes",
    "permission_classes",
    "throttle_classes",
    "parser_classes",
    "renderer_classes",
)
LIST_COLLABORATORS = ("filter_backends",)
EVERY_REQUEST_COLLABORATOR = ("content_negotiation_class", "versioning_class")  # one class each, not a list
LIST_COLLABORATOR = ("pagination_class",)


@dataclass(frozen=True)
class Instance:
    """`self` or `view` in the code read: attributes and methods resolve on this class."""

    cls: type


REQUEST = "request"
QUERY = "query"


@dataclass(frozen=True)
class Value:
    """What an expression may be: the request, its query dict, an instance, and the literal texts it may hold."""

    kinds: frozenset = frozenset()
    strings: frozenset = frozenset()

    def __or__(self, other: "Value") -> "Value":
        return Value(self.kinds | other.kinds, self.strings | other.strings)

    @property
    def is_query(self) -> bool:
        return QUERY in self.kinds

    @property
    def may_reach_query(self) -> bool:
        return bool(self.kinds)


NOTHING = Value()
REQUEST_VALUE = Value(frozenset({REQUEST}))
QUERY_VALUE = Value(frozenset({QUERY}))


@dataclass
class Reads:
    names: set[str] = field(default_factory=set)
    unresolved: list[str] = field(default_factory=list)

    def add(self, other: "Reads") -> None:
        self.names |= other.names
        self.unresolved += [u for u in other.unresolved if u not in self.unresolved]


def is_project_code(obj) -> bool:
    try:
        source = inspect.getsourcefile(obj)
    except TypeError:
        return False
    return bool(source) and _is_project_file(source)


@functools.cache
def _is_project_file(source: str) -> bool:
    path = Path(source).resolve()
    return path.is_relative_to(PROJECT_ROOT) and not {".venv", "site-packages"} & set(path.parts)


def _strings_of(obj) -> frozenset:
    """The texts a constant holds: a text, or the texts (or keys) of a tuple, list, set or dict of texts."""
    if isinstance(obj, str):
        return frozenset({obj})
    if isinstance(obj, dict | list | tuple | set | frozenset) and obj and all(isinstance(x, str) for x in obj):
        return frozenset(obj)
    return frozenset()


@functools.cache
def _parse(function) -> tuple[ast.FunctionDef, int]:
    lines, first = inspect.getsourcelines(function)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), None)
    if node is None:  # a lambda: write the helper as a function to have it read
        raise ValueError(f"{function.__qualname__}: no function definition in its source")
    return node, first - 1


class _FunctionScan:
    """One function's reads, given what its parameters are bound to."""

    def __init__(self, analysis: "QueryReadAnalysis", function, bindings: dict, owner: type | None, chain: str):
        self.analysis, self.function, self.owner, self.chain = analysis, function, owner, chain
        self.node, self.line_offset = _parse(function)
        self.globals = function.__globals__
        # Every local name starts as nothing known, so none is mistaken for a module-level name it shadows.
        self.env: dict[str, Value] = {name: NOTHING for node in ast.walk(self.node) for name in _local_names(node)}
        self.env.update(bindings)
        self.parents: dict[ast.AST, ast.AST] = {}
        for parent in ast.walk(self.node):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        self.reads = Reads()

    def where(self, node: ast.AST) -> str:
        path = Path(inspect.getsourcefile(self.function)).resolve().relative_to(PROJECT_ROOT)
        return f"{path}:{node.lineno + self.line_offset} ({self.chain})"

    def unresolved(self, node: ast.AST, what: str) -> None:
        entry = f"{self.where(node)}: {what}: {ast.unparse(node)}"
        if entry not in self.reads.unresolved:
            self.reads.unresolved.append(entry)

    # --- values ---------------------------------------------------------------------------------------------

    def static(self, node: ast.AST):
        """The module-level object a name or dotted name stands for (not a local), or None."""
        if isinstance(node, ast.Name) and node.id not in self.env:
            if node.id in self.globals:
                return self.globals[node.id]
            return getattr(builtins, node.id, None)
        if isinstance(node, ast.Attribute):
            base = self.static(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        return None

    def value(self, node: ast.AST | None) -> Value:
        if node is None:
            return NOTHING
        if isinstance(node, ast.Constant):
            return Value(strings=_strings_of(node.value))
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            found = NOTHING
            for element in node.elts:
                found = found | Value(strings=self.value(element).strings)
            return found
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            return Value(strings=_strings_of(self.static(node)))
        if isinstance(node, ast.Attribute):
            return self.attribute_value(node)
        if isinstance(node, ast.Call):
            return self.call_value(node)
        if isinstance(node, ast.DictComp | ast.ListComp | ast.SetComp | ast.GeneratorExp):
            copies = any(self.value(generator.iter).is_query for generator in node.generators)
            return QUERY_VALUE if copies else NOTHING
        if isinstance(node, ast.BoolOp):
            found = NOTHING
            for part in node.values:
                found = found | self.value(part)
            return found
        if isinstance(node, ast.IfExp):
            return self.value(node.body) | self.value(node.orelse)
        if isinstance(node, ast.Starred | ast.NamedExpr):
            return self.value(node.value)
        return NOTHING

    def attribute_value(self, node: ast.Attribute) -> Value:
        base = self.value(node.value)
        if REQUEST in base.kinds and node.attr in QUERY_ATTRIBUTES:
            return QUERY_VALUE
        found = NOTHING
        for kind in base.kinds:
            if isinstance(kind, Instance):
                if node.attr == "request":
                    found = found | REQUEST_VALUE
                else:
                    found = found | Value(strings=_strings_of(inspect.getattr_static(kind.cls, node.attr, None)))
        if not base.kinds:
            found = found | Value(strings=_strings_of(self.static(node)))
        return found

    def call_value(self, node: ast.Call) -> Value:
        if isinstance(node.func, ast.Attribute) and node.func.attr in WHOLE_VIEWS:
            base = self.value(node.func.value)
            if base.is_query:
                return QUERY_VALUE
            if node.func.attr in ("items", "keys"):
                return Value(strings=base.strings)  # a dict attribute's keys, e.g. `self.query_filters.items()`
        return NOTHING

    # --- bindings (flow-insensitive: every assignment anywhere in the function) ---------------------------------

    def bind(self, target: ast.AST, value: Value) -> bool:
        if isinstance(target, ast.Name):
            before = self.env.get(target.id, NOTHING)
            after = before | value
            self.env[target.id] = after
            return after != before
        if isinstance(target, ast.Tuple | ast.List) and target.elts:
            # `for key, lookup in mapping.items()`: the key takes the texts, the rest nothing known.
            changed = self.bind(target.elts[0], Value(strings=value.strings))
            for element in target.elts[1:]:
                changed |= self.bind(element, NOTHING)
            return changed
        return False

    def solve_bindings(self) -> None:
        for _ in range(10):
            changed = False
            for node in ast.walk(self.node):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        changed |= self.bind(target, self.value(node.value))
                elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
                    changed |= self.bind(node.target, self.value(node.value))
                elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
                    iterated = self.value(node.iter)
                    changed |= self.bind(node.target, Value(strings=iterated.strings))
            if not changed:
                return

    # --- reads --------------------------------------------------------------------------------------------------

    def key_read(self, node: ast.AST, key: ast.AST | None) -> None:
        names = self.value(key).strings if key is not None else frozenset()
        if names:
            self.reads.names |= names
        else:
            self.unresolved(node, "a query parameter whose name is not known")

    def scan(self) -> Reads:
        self.solve_bindings()
        for node in ast.walk(self.node):
            if isinstance(node, ast.Call):
                self.follow(node)
            stored = isinstance(getattr(node, "ctx", None), ast.Store | ast.Del)
            if isinstance(node, ast.expr) and not stored and self.value(node).is_query:
                self.use_of_query(node)
        return self.reads

    def use_of_query(self, node: ast.expr) -> None:
        """A place the query dict (or a copy of it) appears: a read, a hand-over, or something unresolved."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.Attribute):
            call = self.parents.get(parent)
            if isinstance(call, ast.Call) and call.func is parent and parent.attr in KEY_READS:
                self.key_read(call, call.args[0] if call.args else None)
                return
            if isinstance(call, ast.Call) and call.func is parent and parent.attr in WHOLE_VIEWS:
                return  # the call is the dict again; its own use is checked
            self.unresolved(parent, "the query dict used in a way not followed")
            return
        if isinstance(parent, ast.Subscript) and parent.value is node:
            self.key_read(parent, parent.slice)
            return
        if isinstance(parent, ast.Compare) and node in parent.comparators:
            if all(isinstance(op, ast.In | ast.NotIn) for op in parent.ops):
                self.key_read(parent, parent.left)
                return
        if isinstance(parent, ast.keyword):
            parent = self.parents.get(parent)
        if isinstance(parent, ast.Call) and node is not parent.func:
            if self.callee(parent) is not None:
                return  # a serializer or a project function: `follow` reads it
        if isinstance(parent, ast.Assign | ast.AnnAssign | ast.NamedExpr | ast.BoolOp | ast.IfExp | ast.Starred):
            return  # another name for it, or part of a value whose own use is checked
        if isinstance(parent, ast.comprehension) and parent.iter is node:
            if isinstance(self.parents.get(parent), ast.DictComp | ast.ListComp | ast.SetComp | ast.GeneratorExp):
                return  # a copy of the dict, whose own use is checked
        self.unresolved(parent or node, "the query dict used in a way not followed")

    # --- calls ----------------------------------------------------------------------------------------------

    def callee(self, call: ast.Call):
        """(kind, target, bound self) for a call this analysis follows: a serializer class or a project function."""
        func = call.func
        target, bound_self = None, None
        if isinstance(func, ast.Attribute):
            base = self.value(func.value)
            instances = [kind for kind in base.kinds if isinstance(kind, Instance)]
            if instances:
                target = inspect.getattr_static(instances[0].cls, func.attr, None)
                bound_self = Value(frozenset({instances[0]}))
            elif (
                isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name)
                and func.value.func.id == "super"
                and self.owner is not None
            ):
                target = self.super_attribute(func.attr)
                bound_self = self.env.get("self", NOTHING)
            else:
                target = self.static(func)
        else:
            target = self.static(func)
        if isinstance(target, staticmethod):
            target, bound_self = target.__func__, None
        elif isinstance(target, classmethod):
            target, bound_self = target.__func__, NOTHING  # `cls`, which holds no request
        if isinstance(target, type) and issubclass(target, BaseSerializer):
            return ("serializer", target, None)
        if isinstance(target, types.FunctionType):
            target = inspect.unwrap(target)
            if is_project_code(target):
                return ("function", target, bound_self)
        return None

    def super_attribute(self, name: str):
        mro = self.owner.__mro__
        defining = next((c for c in mro if self.function in [inspect.unwrap(v) for v in _functions_of(c)]), None)
        later = mro[mro.index(defining) + 1 :] if defining in mro else ()
        for cls in later:
            if name in cls.__dict__:
                return cls.__dict__[name]
        return None

    def follow(self, call: ast.Call) -> None:
        found = self.callee(call)
        if found is None:
            return
        kind, target, bound_self = found
        positional = [self.value(a) for a in call.args]
        keywords = {k.arg: self.value(k.value) for k in call.keywords if k.arg is not None}
        if kind == "serializer":
            if any(v.is_query for v in [*positional, *keywords.values()]):
                self.reads.names |= set(target().fields)
            return
        if not any(v.may_reach_query for v in [*positional, *keywords.values(), bound_self or NOTHING]):
            return  # neither the request, its query nor the view goes in: nothing to read there
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            self.unresolved(call, "the request handed on with *args or **kwargs")
            return
        arguments = [bound_self] if bound_self is not None else []
        try:
            bound = inspect.signature(target).bind_partial(*arguments, *positional, **keywords)
        except TypeError:
            self.unresolved(call, "a call whose arguments do not match its function")
            return
        bindings = dict(bound.arguments)
        owner = next((k.cls for k in (bound_self or NOTHING).kinds if isinstance(k, Instance)), None)
        self.reads.add(self.analysis.function_reads(target, bindings, owner, f"{self.chain} → {target.__qualname__}"))


def _local_names(node: ast.AST):
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        yield node.id
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, ast.ExceptHandler) and node.name:
        yield node.name
    elif isinstance(node, ast.alias):
        yield (node.asname or node.name).split(".")[0]
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name


def _functions_of(cls: type):
    for value in cls.__dict__.values():
        if isinstance(value, staticmethod | classmethod):
            value = value.__func__
        if isinstance(value, types.FunctionType):
            yield value


class QueryReadAnalysis:
    """Memoised over (function, bindings): a helper called from many views is read once per way it is called."""

    def __init__(self):
        self._done: dict = {}

    def function_reads(self, function, bindings: dict, owner: type | None, chain: str) -> Reads:
        parameters = inspect.signature(function).parameters
        full = {}
        for name, parameter in parameters.items():
            if name in bindings:
                full[name] = bindings[name]
            elif isinstance(parameter.default, str):
                full[name] = Value(strings=frozenset({parameter.default}))
        key = (function, owner, tuple(sorted(full.items(), key=lambda item: item[0])))
        if key in self._done:
            return self._done[key] or Reads()  # None: being read further up this chain (recursion)
        self._done[key] = None
        reads = _FunctionScan(self, function, full, owner, chain).scan()
        self._done[key] = reads
        return reads

    def root(self, function, owner: type, view_cls: type, chain: str) -> Reads:
        """A method DRF calls with the request: `self` is `owner`, a `request` parameter the request and a `view`
        parameter the view."""
        function = inspect.unwrap(function)
        bindings = {}
        for name in inspect.signature(function).parameters:
            if name == "self":
                bindings[name] = Value(frozenset({Instance(owner)}))
            elif name == "request":
                bindings[name] = REQUEST_VALUE
            elif name == "view":
                bindings[name] = Value(frozenset({Instance(view_cls)}))
        return self.function_reads(function, bindings, owner, chain)

    def operation_reads(self, view_cls: type, method: str, action: str | None) -> Reads:
        """Every query parameter the operation `method` (of `action`, for a viewset) reads."""
        reads = Reads()
        handler = getattr(view_cls, action or method.lower())
        hooks = EVERY_REQUEST_HOOKS + (LIST_HOOKS if action == "list" else ())
        for function in [handler, *(getattr(view_cls, name, None) for name in hooks)]:
            for root in _project_functions(function):
                reads.add(self.root(root, view_cls, view_cls, f"{view_cls.__name__}.{root.__name__}"))
        listing = action == "list"
        lists = EVERY_REQUEST_COLLABORATORS + (LIST_COLLABORATORS if listing else ())
        singles = EVERY_REQUEST_COLLABORATOR + (LIST_COLLABORATOR if listing else ())
        classes = [c for name in lists for c in getattr(view_cls, name, None) or ()]
        classes += [getattr(view_cls, name) for name in singles if getattr(view_cls, name, None)]
        for cls in classes:
            for base in cls.__mro__:
                for function in _functions_of(base):
                    if is_project_code(function):
                        reads.add(self.root(function, cls, view_cls, f"{cls.__name__}.{function.__name__}"))
        return reads


def _project_functions(function):
    """The project function a DRF hook or handler is, or wraps (`@api_view` wraps the view function in a closure)."""
    if function is None:
        return []
    function = inspect.unwrap(function)
    if not isinstance(function, types.FunctionType):
        return []
    if is_project_code(function):
        return [function]
    cells = function.__closure__ or ()
    return [
        inspect.unwrap(c.cell_contents)
        for c in cells
        if isinstance(c.cell_contents, types.FunctionType) and is_project_code(c.cell_contents)
    ]
