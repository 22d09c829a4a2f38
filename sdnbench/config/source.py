"""Read an experiment file into YAML nodes, refusing what a configuration file has no use for.

PyYAML's composers recurse once per nesting level (libyaml's segfaults on a
deep file, the pure-Python one raises RecursionError), expand aliases without
limit (a few lines of "billion laughs" fill the memory), cannot tell an
explicit tag from a resolved one, and accept any node as a mapping key. So the
nodes are built here from PyYAML's event stream, which libyaml produces without
recursion, with every bound checked as the events arrive: size, depth, expanded
node count, tags, keys. Each refusal is a ConfigError naming file, line, column
and key path.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import yaml

from ..errors import ConfigError

#: The largest experiment file read. The shipped examples are 1-2 KiB; a file
#: listing thousands of flows or hosts stays far below this.
MAX_FILE_BYTES = 1 << 20
#: Deepest nesting of lists and mappings. The schema needs 6 levels and a request
#: body a few more; libyaml's scanner slows quadratically with flow nesting depth
#: ('[[[[...' 100,000 deep takes 18 s), so the walk stops long before that.
MAX_DEPTH = 64
#: Values in the document once aliases are expanded (every scalar, list and mapping
#: counts). A thousand flows of eight keys are 16,000; aliases may reuse a value, but
#: not multiply a file into millions ("billion laughs"). Reading 100,000 takes about
#: a second here, and a 1 MiB file of short items would hold 300,000.
MAX_NODES = 100_000
#: Longest key: keys are field names (the longest is 20 characters) or option names.
MAX_KEY_CHARS = 256

_TAG = "tag:yaml.org,2002:"
STR, NULL, BOOL, INT, FLOAT = (_TAG + t for t in ("str", "null", "bool", "int", "float"))
#: Explicit tags that only restate a type: `!!str 1.3` keeps a version number text.
_EXPLICIT_OK = {"!", STR}
#: Characters YAML allows in a file (YAML 1.1 "printable"): tab, line ends and printable Unicode.
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def read_text(path: Path) -> str:
    """The file as text: at most MAX_FILE_BYTES of UTF-8 without control characters."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read the experiment file: {exc.strerror}", path=str(path)) from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"larger than {MAX_FILE_BYTES >> 20} MiB; an experiment file is a few KiB of YAML "
                          f"(is this the right file?)", path=str(path))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position(data[:exc.start].decode("utf-8", "replace"))
        raise ConfigError(f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot start or continue a character "
                          f"(save the file as UTF-8)", path=str(path), line=line, column=column) from None
    return text.removeprefix("\ufeff")


def _position(before: str) -> tuple[int, int]:
    """1-based line and column just after `before`."""
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


def _printable(text: str, path: Path) -> None:
    """Refuse control characters (NUL, escape sequences) with their place."""
    bad = _NOT_PRINTABLE.search(text)
    if bad:
        line, column = _position(text[:bad.start()])
        raise ConfigError(f"control character U+{ord(bad.group()):04X} in the text; an experiment file is "
                          f"printable text", path=str(path), line=line, column=column)


def yaml_problem(exc: yaml.YAMLError, text: str) -> tuple[str, int | None, int | None]:
    """A PyYAML error in words, with its 1-based line and column."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
    context = getattr(exc, "context", None)
    cmark = getattr(exc, "context_mark", None)
    words = f"not valid YAML: {problem}"
    if context:
        words += f" ({context}" + (f" from line {cmark.line + 1})" if cmark and cmark is not mark else ")")
    if "tab" in problem or mark and _char_at(text, mark.line, mark.column) == "\t":
        words += "; YAML indents with spaces, not tabs"
    elif "mapping values are not allowed" in problem:
        words += "; a value holding ': ' needs quotes, or a line is indented wrongly"
    return words, (mark.line + 1 if mark else None), (mark.column + 1 if mark else None)


def _char_at(text: str, line: int, column: int) -> str:
    """The character at a 0-based line and column ('' past the end)."""
    lines = text.split("\n", line + 1)
    return lines[line][column:column + 1] if line < len(lines) else ""


class _Frame:
    """A list or mapping being built, with where its items go."""

    __slots__ = ("node", "path", "key", "keynode", "start")

    def __init__(self, node, path: str, start: int):
        self.node, self.path, self.key, self.keynode, self.start = node, path, None, None, start

    def child_path(self) -> str:
        """Key path of the next item."""
        if isinstance(self.node, yaml.SequenceNode):
            return f"{self.path}[{len(self.node.value)}]"
        if self.keynode is None:
            return self.path
        return f"{self.path}.{self.key}" if self.path else self.key


class _Composer:
    """Builds nodes from events; raises ConfigError on the first thing refused."""

    def __init__(self, path: Path):
        self.path = str(path)
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[yaml.Node, int]] = {}   # finished anchors: node, expanded size
        self.open_anchors: set[str] = set()
        self.nodes = 0
        self.root: yaml.Node | None = None
        self.documents = 0

    def fail(self, event, message: str, key: str | None = None):
        """Raise at the event; the key path defaults to the place of the value being read."""
        if key is None and self.stack:
            key = self.stack[-1].child_path()   # built only here: paths of every value would cost
        mark = event.start_mark
        if key and len(key) > 80:       # a path 64 levels deep says less than its start
            key = key[:77] + "..."
        raise ConfigError(message, path=self.path, line=mark.line + 1, column=mark.column + 1, key=key or None)

    def feed(self, event) -> None:
        """Take one event."""
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                self.fail(event, "a second YAML document ('---'); an experiment file is one document")
        elif isinstance(event, (yaml.StreamStartEvent, yaml.StreamEndEvent, yaml.DocumentEndEvent)):
            return
        elif isinstance(event, yaml.CollectionEndEvent):
            frame = self.stack.pop()
            anchor = getattr(frame.node, "anchor_name", None)
            if anchor:
                self.open_anchors.discard(anchor)
                self.anchors[anchor] = (frame.node, self.nodes - frame.start)
            self._place(event, frame.node)
        else:
            self._node(event)

    def _node(self, event) -> None:
        parent = self.stack[-1] if self.stack else None
        at_key = parent is not None and parent.keynode is None and isinstance(parent.node, yaml.MappingNode)
        if isinstance(event, yaml.AliasEvent):
            self._alias(event, at_key)
            return
        tag = event.tag
        if tag is not None and tag not in _EXPLICIT_OK:
            self.fail(event, f"YAML tag {_tag_name(tag)} is not accepted: experiment files hold plain text, "
                             f"numbers, true/false, lists and mappings")
        if event.anchor is not None and (event.anchor in self.anchors or event.anchor in self.open_anchors):
            self.fail(event, f"anchor &{event.anchor} is defined twice")
        self.nodes += 1
        if self.nodes > MAX_NODES:
            self.fail(event, f"more than {MAX_NODES:,} values (counting what aliases repeat); an experiment "
                             f"file needs far fewer")
        if isinstance(event, yaml.ScalarEvent):
            node = self._scalar(event)
            if at_key:
                self._check_key(event, node, parent.path)
            if event.anchor:
                self.anchors[event.anchor] = (node, 1)
            self._place(event, node)
            return
        if at_key:
            what = "a list" if isinstance(event, yaml.SequenceStartEvent) else "a mapping"
            self.fail(event, f"{what} used as a key; keys are names (text)")
        if len(self.stack) >= MAX_DEPTH:
            self.fail(event, f"nested more than {MAX_DEPTH} levels deep")
        cls = yaml.SequenceNode if isinstance(event, yaml.SequenceStartEvent) else yaml.MappingNode
        node = cls(_TAG + ("seq" if cls is yaml.SequenceNode else "map"), [], event.start_mark, event.end_mark,
                   flow_style=event.flow_style)
        if event.anchor:
            node.anchor_name = event.anchor
            self.open_anchors.add(event.anchor)
        self.stack.append(_Frame(node, parent.child_path() if parent else "", self.nodes - 1))

    def _alias(self, event, at_key: bool) -> None:
        if at_key:
            self.fail(event, f"an alias (*{event.anchor}) used as a key; keys are names (text)")
        if event.anchor in self.open_anchors:
            self.fail(event, f"alias *{event.anchor} refers to a value that contains it")
        if event.anchor not in self.anchors:
            self.fail(event, f"alias *{event.anchor} has no anchor &{event.anchor} before it")
        node, size = self.anchors[event.anchor]
        self.nodes += size
        if self.nodes > MAX_NODES:
            self.fail(event, f"alias *{event.anchor} expands the file past {MAX_NODES:,} values; "
                             f"aliases may reuse a value, not multiply it")
        self._place(event, node)

    def _scalar(self, event) -> yaml.ScalarNode:
        """A scalar node whose tag is one of str, null, bool, int, float and whose value reads as that type."""
        # Only escapes in double quotes make characters the file's text (checked whole) does not hold.
        if event.style == '"' and (_NOT_PRINTABLE.search(event.value) or "\r" in event.value):
            self.fail(event, "a control character (from an escape such as \\x00) in a value; "
                             "values are printable text")
        tag = _plain_tag(event.value) if event.tag is None and event.implicit[0] else STR
        return yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)

    def _check_key(self, event, node: yaml.ScalarNode, parent_path: str) -> None:
        if event.value == "<<" and event.tag is None and event.implicit[0]:
            self.fail(event, "merge keys (<<) are not supported; write the keys out", parent_path)
        if node.tag == NULL:
            self.fail(event, "an empty (null) key; keys are names (text)", parent_path)
        if node.tag != STR:
            kind = "a boolean" if node.tag == BOOL else "a number"
            self.fail(event, f"{event.value} is {kind} used as a key; keys are names "
                             f"(quote it if it is meant as text)", parent_path)
        if len(event.value) > MAX_KEY_CHARS:
            self.fail(event, f"a key of {len(event.value):,} characters; keys are at most {MAX_KEY_CHARS}",
                      parent_path)

    def _place(self, event, node: yaml.Node) -> None:
        """Put a finished node into its parent (or make it the document)."""
        if not self.stack:
            self.root = node
            return
        frame = self.stack[-1]
        if isinstance(frame.node, yaml.SequenceNode):
            frame.node.value.append(node)
        elif frame.keynode is None:
            frame.keynode, frame.key = node, node.value
        else:
            frame.node.value.append((frame.keynode, node))
            frame.keynode = frame.key = None


@functools.lru_cache(maxsize=4096)
def _plain_tag(value: str) -> str:
    """The tag of a plain (unquoted) scalar: null, bool, int or float when it reads as one, else str."""
    tag = _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))
    if tag in (INT, FLOAT):
        try:
            _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, value))
        except ValueError:          # '0b_', or more digits than Python converts: text, not a number
            return STR
    # Dates, '=' and '<<' are text here: no field holds anything else.
    return tag if tag in (NULL, BOOL, INT, FLOAT) else STR


def compose(text: str, path: Path) -> yaml.Node | None:
    """The document's root node (None for an empty file), or ConfigError saying where and what."""
    _printable(text, path)
    composer = _Composer(path)
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            composer.feed(event)
    except yaml.YAMLError as exc:
        message, line, column = yaml_problem(exc, text)
        raise ConfigError(message, path=str(path), line=line, column=column) from None
    return composer.root


def scalar_value(node: yaml.ScalarNode):
    """The Python value of a scalar node: its text unless its tag says null, bool, int or float."""
    construct = _CONSTRUCTOR.yaml_constructors.get(node.tag)
    if node.tag == STR or construct is None:
        return node.value
    try:
        return construct(_CONSTRUCTOR, node)
    except (ValueError, KeyError):   # nodes not built here, e.g. '!!int x' from yaml.compose
        return node.value


def _tag_name(tag: str) -> str:
    """A tag as it is written: !!binary, !foo."""
    name = "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag
    return name if len(name) <= 60 else name[:60] + "..."
