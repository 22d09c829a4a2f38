"""A small strict schema language over YAML nodes, so every error names its line.

Validation walks the composed YAML node tree (which keeps line numbers),
turning it into plain Python values. Every problem becomes an Issue with the
file, line, dotted key path and what was expected; all issues are collected so
that a user fixes a file in one pass. The same definitions produce the
published JSON Schema (see `jsonschema_of`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import yaml

from .source import scalar_value

REQUIRED = object()


@dataclass
class Issue:
    """One validation problem."""

    line: int | None
    key: str
    message: str

    def render(self, path: str) -> str:
        """'file:line: key: message'."""
        where = f"{path}:{self.line}" if self.line else path
        return f"{where}: {self.key or '(top level)'}: {self.message}"


class Context:
    """Collects issues while walking a document."""

    def __init__(self):
        self.issues: list[Issue] = []
        self.lines: dict[str, int] = {}   # dotted key path -> line, for later semantic checks

    def error(self, node: yaml.Node | None, key: str, message: str) -> None:
        """Record a problem at node's line."""
        line = node.start_mark.line + 1 if node is not None else None
        self.issues.append(Issue(line, key, message))

    def error_at(self, node: yaml.Node | None, key: str, message: str) -> None:
        """Record a problem at the line of key when the file wrote it, else at node's."""
        if key in self.lines:
            self.issues.append(Issue(self.lines[key], key, message))
        else:
            self.error(node, key, message)


def _scalar(node: yaml.Node) -> Any:
    """The Python value of a scalar node (tags were resolved safely when the file was read)."""
    return scalar_value(node)


class Type:
    """Base of all field types."""

    doc = ""

    def check(self, node: yaml.Node, ctx: Context, key: str) -> Any:
        """Validate node and return its Python value (None after an error)."""
        raise NotImplementedError

    def jsonschema(self) -> dict:
        """This type as JSON Schema."""
        raise NotImplementedError


class Number(Type):
    """An int or float with optional bounds."""

    def __init__(self, integer=False, minimum=None, exclusive_minimum=None, maximum=None):
        self.integer, self.minimum, self.xmin, self.maximum = integer, minimum, exclusive_minimum, maximum

    def expected(self) -> str:
        """Human description of the accepted values."""
        kind = "an integer" if self.integer else "a number"
        if self.minimum is not None and self.maximum is not None:
            return f"{kind} from {self.minimum:,} to {self.maximum:,}"
        bounds = []
        if self.minimum is not None:
            bounds.append(f">= {self.minimum}")
        if self.xmin is not None:
            bounds.append(f"> {self.xmin}")
        if self.maximum is not None:
            bounds.append(f"<= {self.maximum:,}")
        return kind + (" " + " and ".join(bounds) if bounds else "")

    def check(self, node, ctx, key):
        value = _scalar(node) if isinstance(node, yaml.ScalarNode) else None
        ok_type = isinstance(value, int) if self.integer else isinstance(value, (int, float))
        if isinstance(value, bool) or not ok_type:
            ctx.error(node, key, f"expected {self.expected()}, got {_describe(node)}")
            return None
        if isinstance(value, float) and not math.isfinite(value):
            ctx.error(node, key, f"expected a finite number ({self.expected()}), got {value}")
            return None
        if ((self.minimum is not None and value < self.minimum)
                or (self.xmin is not None and value <= self.xmin)
                or (self.maximum is not None and value > self.maximum)):
            ctx.error(node, key, f"expected {self.expected()}, got {_cut(value)}")
            return None
        return value

    def jsonschema(self):
        s: dict = {"type": "integer" if self.integer else "number"}
        if self.minimum is not None:
            s["minimum"] = self.minimum
        if self.xmin is not None:
            s["exclusiveMinimum"] = self.xmin
        if self.maximum is not None:
            s["maximum"] = self.maximum
        return s


class Str(Type):
    """A string, optionally one of a fixed set or accepted by a predicate."""

    def __init__(self, choices=None, predicate: Callable[[str], str | None] | None = None, pattern=None):
        self.choices, self.predicate, self.pattern = choices, predicate, pattern

    def check(self, node, ctx, key):
        value = _scalar(node) if isinstance(node, yaml.ScalarNode) else None
        if self.choices and not isinstance(value, str) and value is not None:
            value = str(value)  # e.g. openflow: 1.3 written as a number
        if not isinstance(value, str):
            ctx.error(node, key, f"expected a string, got {_describe(node)}")
            return None
        if self.choices and value not in self.choices:
            ctx.error(node, key, f"expected one of {', '.join(map(str, self.choices))}; got {_cut(value)}")
            return None
        if self.predicate:
            problem = self.predicate(value)
            if problem:
                ctx.error(node, key, problem)
                return None
        return value

    def jsonschema(self):
        if self.choices:
            return {"type": "string", "enum": list(self.choices)}
        s = {"type": "string"}
        if self.pattern:
            s["pattern"] = self.pattern
        return s


class Bool(Type):
    """true or false."""

    def check(self, node, ctx, key):
        value = _scalar(node) if isinstance(node, yaml.ScalarNode) else None
        if not isinstance(value, bool):
            ctx.error(node, key, f"expected true or false, got {_describe(node)}")
            return None
        return value

    def jsonschema(self):
        return {"type": "boolean"}


class ListOf(Type):
    """A non-empty list of one item type (a single item is accepted as a list when scalar_ok, and kept as
    the item itself when keep_scalar: a file that names one value reads as before)."""

    def __init__(self, item: Type, min_items=1, scalar_ok=False, max_items: int | None = None, why: str = "",
                 keep_scalar: bool = False):
        self.item, self.min_items, self.scalar_ok = item, min_items, scalar_ok or keep_scalar
        self.keep_scalar = keep_scalar
        self.max_items, self.why = max_items, why   # why: the reason for max_items, said in the error

    def check(self, node, ctx, key):
        if not isinstance(node, yaml.SequenceNode):
            if self.scalar_ok and not isinstance(node, yaml.MappingNode):
                value = self.item.check(node, ctx, key)
                return None if value is None else value if self.keep_scalar else [value]
            ctx.error(node, key, f"expected a list, got {_describe(node)}")
            return None
        if len(node.value) < self.min_items:
            ctx.error(node, key, f"expected at least {self.min_items} item(s)")
            return None
        if self.max_items is not None and len(node.value) > self.max_items:
            why = f" ({self.why})" if self.why else ""
            ctx.error(node, key, f"{len(node.value):,} items; at most {self.max_items:,}{why}")
            return None
        out = [self.item.check(child, ctx, f"{key}[{i}]") for i, child in enumerate(node.value)]
        return None if any(v is None for v in out) else out

    def jsonschema(self):
        s = {"type": "array", "items": self.item.jsonschema(), "minItems": self.min_items}
        if self.max_items is not None:
            s["maxItems"] = self.max_items
        if self.scalar_ok:
            return {"oneOf": [self.item.jsonschema(), s]}
        return s


@dataclass
class Field:
    """One key of a record."""

    type: Type
    default: Any = REQUIRED
    doc: str = ""


@dataclass
class Record(Type):
    """A mapping with a fixed set of keys; unknown keys are errors."""

    name: str
    fields: dict[str, Field]
    doc: str = ""
    extra_check: Callable[[dict, yaml.Node, Context, str], None] | None = None
    defs: dict = field(default_factory=dict)

    def check(self, node, ctx, key):
        if not isinstance(node, yaml.MappingNode):
            ctx.error(node, key, f"expected a mapping ({self.name}), got {_describe(node)}")
            return None
        out, failed, seen = {}, False, set()
        for knode, vnode in node.value:
            k = knode.value if isinstance(knode, yaml.ScalarNode) else str(knode)
            path = f"{key}.{k}" if key else k
            if k in seen:
                ctx.error(knode, path, "key given twice")
                failed = True
                continue
            seen.add(k)
            ctx.lines[path] = vnode.start_mark.line + 1
            if k not in self.fields:
                ctx.error(knode, path, f"unknown key; {self.name} accepts: {', '.join(self.fields)}")
                failed = True
                continue
            value = self.fields[k].type.check(vnode, ctx, path)
            failed |= value is None
            out[k] = value
        for k, f in self.fields.items():
            if k not in seen:
                if f.default is REQUIRED:
                    ctx.error(node, f"{key}.{k}" if key else k, f"required key missing ({f.doc or self.name})")
                    failed = True
                else:
                    out[k] = f.default
        if not failed and self.extra_check:
            before = len(ctx.issues)
            self.extra_check(out, node, ctx, key)
            failed = len(ctx.issues) > before
        return None if failed else out

    def jsonschema(self):
        props = {}
        for k, f in self.fields.items():
            p = dict(f.type.jsonschema())
            if f.doc:
                p["description"] = f.doc
            if f.default is not REQUIRED and f.default is not None:
                p["default"] = f.default
            props[k] = p
        s = {"type": "object", "additionalProperties": False, "properties": props}
        req = [k for k, f in self.fields.items() if f.default is REQUIRED]
        if req:
            s["required"] = req
        if self.doc:
            s["description"] = self.doc
        return s


class Tagged(Type):
    """A mapping whose tag key (`kind`, `type`) selects one of several records.

    With a default, a mapping without the tag is the default variant.
    """

    def __init__(self, variants: dict[str, Record], tag="kind", default: str | None = None):
        self.variants, self.tag, self.default = variants, tag, default

    def check(self, node, ctx, key):
        if not isinstance(node, yaml.MappingNode):
            ctx.error(node, key, f"expected a mapping with '{self.tag}', got {_describe(node)}")
            return None
        for knode, vnode in node.value:
            if getattr(knode, "value", None) == self.tag:
                kind = vnode.value if isinstance(vnode, yaml.ScalarNode) else None
                if kind not in self.variants:
                    ctx.error(vnode, f"{key}.{self.tag}",
                              f"expected one of {', '.join(self.variants)}; got {_describe(vnode)}")
                    return None
                return self.variants[kind].check(node, ctx, key)
        if self.default:
            return self.variants[self.default].check(node, ctx, key)
        ctx.error(node, key, f"required key '{self.tag}' missing (one of {', '.join(self.variants)})")
        return None

    def jsonschema(self):
        return {"oneOf": [v.jsonschema() for v in self.variants.values()]}


class Mapping(Type):
    """A free mapping of string keys to one value type (e.g. a parameter sweep)."""

    def __init__(self, value: Type, keys: Callable[[str], str | None] | None = None):
        self.value, self.keys = value, keys

    def check(self, node, ctx, key):
        if not isinstance(node, yaml.MappingNode):
            ctx.error(node, key, f"expected a mapping, got {_describe(node)}")
            return None
        out, failed = {}, False
        for knode, vnode in node.value:
            k = str(knode.value)
            path = f"{key}.{k}"
            if k in out:
                ctx.error(knode, path, "key given twice")
                failed = True
                continue
            ctx.lines[path] = vnode.start_mark.line + 1
            problem = self.keys(k) if self.keys else None
            if problem:
                ctx.error(knode, path, problem)
                failed = True
                continue
            v = self.value.check(vnode, ctx, path)
            failed |= v is None
            out[k] = v
        return None if failed else out

    def jsonschema(self):
        return {"type": "object", "additionalProperties": self.value.jsonschema()}


class Any_(Type):
    """Any YAML value (for adapter options passed through untouched), of at most max_values values."""

    def __init__(self, max_values: int | None = None):
        self.max_values = max_values

    def check(self, node, ctx, key):
        before = len(ctx.issues)
        value = _plain(node, ctx, key, {})
        if self.max_values is not None and _size(node) > self.max_values:
            ctx.error(node, key, f"more than {self.max_values:,} values; these options are copied into "
                                 f"every trial")
        if len(ctx.issues) > before:
            return None
        return {} if value is None else value

    def jsonschema(self):
        return {}


#: Longest name or label: it heads a table column and becomes part of file names in the run directory.
MAX_NAME_CHARS = 100


def _name_problem(name: str) -> str | None:
    """Names and labels become file names (run directory, controller logs): no '/', not empty."""
    if not name.strip() or name in (".", ".."):
        return f"expected a name, got {name!r}"
    if "/" in name:
        return f"{name[:MAX_NAME_CHARS]!r} holds a slash; names become file names in the run directory"
    if len(name) > MAX_NAME_CHARS:
        return f"a name of {len(name):,} characters; at most {MAX_NAME_CHARS} (it heads a table column)"
    return None


#: The name of an experiment or workload, the label of a controller or topology.
NAME = Str(predicate=_name_problem, pattern=f"^[^/]{{1,{MAX_NAME_CHARS}}}$")


def positive(integer: bool = True, maximum=None) -> Number:
    """A number above zero (an integer from 1 by default)."""
    return Number(integer=True, minimum=1, maximum=maximum) if integer else \
        Number(exclusive_minimum=0, maximum=maximum)


def _plain(node: yaml.Node, ctx: Context, key: str, done: dict) -> Any:
    """Plain Python values of a node tree; a value an alias repeats is built once and shared."""
    if id(node) in done:
        return done[id(node)]
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node)
    if isinstance(node, yaml.SequenceNode):
        value = done[id(node)] = []
        value.extend(_plain(child, ctx, f"{key}[{i}]", done) for i, child in enumerate(node.value))
        return value
    value = done[id(node)] = {}
    for knode, vnode in node.value:
        k = knode.value if isinstance(knode, yaml.ScalarNode) else str(knode)
        if k in value:
            ctx.error(knode, f"{key}.{k}", "key given twice")
            continue
        value[k] = _plain(vnode, ctx, f"{key}.{k}", done)
    return value


def _size(node: yaml.Node) -> int:
    """Values a node holds, a repeated (aliased) one each time it appears (the reader bounds the total)."""
    count, todo = 0, [node]
    while todo:
        n = todo.pop()
        count += 1
        if isinstance(n, yaml.SequenceNode):
            todo.extend(n.value)
        elif isinstance(n, yaml.MappingNode):
            todo.extend(v for _, v in n.value)
    return count


def _cut(value: Any, limit: int = 60) -> str:
    """A value as written in a message (repr for text), shortened past `limit` characters."""
    text = repr(value) if isinstance(value, str) else f"{value:,}" if isinstance(value, (int, float)) else str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(str(value)):,} characters)"


def _describe(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    value = _scalar(node)
    if value is None:
        return "nothing (empty value)"
    return f"{type(value).__name__} {_cut(value if isinstance(value, str) else repr(value))}"
