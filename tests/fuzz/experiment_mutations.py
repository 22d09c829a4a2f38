"""Mutations of experiment files: the ways a hand-edited or damaged YAML file goes wrong.

Each mutation takes the file's bytes and a random.Random and returns new bytes,
so the same seed always gives the same file (a failing case can be replayed),
and hypothesis can drive the choices through `st.randoms()`.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: Values a field may be given by mistake or malice: wrong types, huge and odd
#: numbers, YAML tags, anchors and aliases, broken syntax, unit-less stages.
JUNK = [
    "99999999999999999999", "-1", "0", "0.0", "-0", "1e309", "1.0e+309", "-1.0e+309", ".inf", "-.inf",
    ".nan", "~", "null", "''", '""', "[]", "{}", "[1, 2", "{a: 1", "]", "}", "yes", "no", "on", "0x7fffffff",
    "0o777", "0b_", "0x_", "1_000", "2001-12-14", "2001-13-45", "12:30:45", "1:_", "=", "<<", "?", "-", ":",
    "'unterminated", '"\\x00"', '"\\uD800"', "!!python/object/apply:os.system ['true']", "!foo bar",
    "!!binary aGVsbG8=", "!!set {a, b}", "!!omap [a: 1]", "!!str 5", "!!int x", "!!bool maybe",
    "!!float zz", "!!timestamp nope", "&anchor 5", "*undefined", "[*undefined]", "{[1]: 2}", "{{a: 1}: 2}",
    "{null: 1}", "{1: 2}", "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]", "'" + "x" * 5000 + "'", "9" * 5000,
    "1" * 400 + ".5", "ramp:0rps:99999999999999999999rps:60s", "const:1000rps:99999999999h",
    "step:0rps:1000000000krps:0.000001rps:99999h", "ramp:0rps:" + "9" * 400 + "rps:1s", "const:1rps:0s",
    "step:5rps:1rps:1rps:1s", "const:-1rps:1s", "h99999", "first", "last", "udp", "tcp", "icmp", "1.0", "1.3",
    "graphml", "custom", "tree", "nbi", "sbi", "traffic", "newflows", "\t", "a\tb", "\u202e", "\U0001F600",
    "|\n  block", ">\n  folded", "---", "...", "%YAML 1.1", "#", "@x", "`x",
]

#: Keys a mapping may get by mistake: unknown words, non-string keys, YAML oddities.
JUNK_KEYS = ["colour", "[a, b]", "{a: 1}", "~", "null", "1", "1.5", "true", "? [x]\n", "<<", "=", "!!str k",
             "!!binary aGk=", "&k key", "*undefined", "'' ", "k" * 300, "\"\\u0000\""]

_VALUE = re.compile(rb"^(\s*(?:- )?[A-Za-z_][A-Za-z0-9_]*:\s*)(\S.*)$")
_FLOW_VALUE = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*:\s*)([^,{}\[\]]+)")


def examples() -> list[Path]:
    """The shipped example files, the seeds of every mutation."""
    return sorted(EXAMPLES.glob("*.yaml"))


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def replace_value(data: bytes, rnd: random.Random) -> bytes:
    """A `key: value` or `{key: value}` value becomes junk."""
    lines = _lines(data)
    spots = [i for i, ln in enumerate(lines) if _VALUE.match(ln) or _FLOW_VALUE.search(ln)]
    if not spots:
        return data
    i = rnd.choice(spots)
    junk = rnd.choice(JUNK).encode()
    m = _VALUE.match(lines[i])
    if m and (rnd.random() < 0.5 or not _FLOW_VALUE.search(lines[i])):
        lines[i] = m.group(1) + junk
    else:
        hits = list(_FLOW_VALUE.finditer(lines[i]))
        hit = rnd.choice(hits)
        lines[i] = lines[i][:hit.start(2)] + junk + lines[i][hit.end(2):]
    return b"\n".join(lines)


def replace_key(data: bytes, rnd: random.Random) -> bytes:
    """A key becomes junk: unknown, non-string, tagged, an alias."""
    lines = _lines(data)
    spots = [i for i, ln in enumerate(lines) if _VALUE.match(ln)]
    if not spots:
        return data
    i = rnd.choice(spots)
    m = re.match(rb"^(\s*(?:- )?)([A-Za-z_][A-Za-z0-9_]*)(:.*)$", lines[i])
    if m:
        lines[i] = m.group(1) + rnd.choice(JUNK_KEYS).encode() + m.group(3)
    return b"\n".join(lines)


def delete_line(data: bytes, rnd: random.Random) -> bytes:
    """One line disappears."""
    lines = _lines(data)
    del lines[rnd.randrange(len(lines))]
    return b"\n".join(lines)


def duplicate_line(data: bytes, rnd: random.Random) -> bytes:
    """One line appears twice (or many times)."""
    lines = _lines(data)
    i = rnd.randrange(len(lines))
    lines[i:i] = [lines[i]] * rnd.choice((1, 1, 2, 50))
    return b"\n".join(lines)


def swap_lines(data: bytes, rnd: random.Random) -> bytes:
    """Two lines change places."""
    lines = _lines(data)
    i, j = rnd.randrange(len(lines)), rnd.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def reindent_line(data: bytes, rnd: random.Random) -> bytes:
    """One line moves left or right, or gets a tab."""
    lines = _lines(data)
    i = rnd.randrange(len(lines))
    stripped = lines[i].lstrip(b" ")
    indent = len(lines[i]) - len(stripped)
    lines[i] = rnd.choice((b"", b" ", b"\t", b"  " * rnd.randrange(1, 6), b" " * max(0, indent - 1),
                           b" " * (indent + 1))) + stripped
    return b"\n".join(lines)


def truncate(data: bytes, rnd: random.Random) -> bytes:
    """The file ends early (an interrupted save)."""
    return data[:rnd.randrange(len(data) + 1)]


def change_bytes(data: bytes, rnd: random.Random) -> bytes:
    """A few bytes become others: random, control characters, invalid UTF-8, YAML indicators."""
    out = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        if not out:
            break
        i = rnd.randrange(len(out))
        out[i] = rnd.choice((rnd.randrange(256), 0, 0xFF, 0xC3, 0x80, 0x09, 0x0D, ord(":"), ord("-"), ord("["),
                             ord("{"), ord("&"), ord("*"), ord("!"), ord("|"), ord(">"), ord("'"), ord('"'),
                             ord("#"), ord("%"), ord("?")))
    return bytes(out)


def insert_bytes(data: bytes, rnd: random.Random) -> bytes:
    """Odd bytes appear: a BOM, a NUL, CRLF line ends, a second document, a directive."""
    i = rnd.randrange(len(data) + 1)
    piece = rnd.choice((b"\xef\xbb\xbf", b"\x00", b"\r\n", b"\r", b"\n---\n", b"\n...\n", b"%YAML 1.2\n",
                        b"\xff\xfe", b"\x1b[31m", b"\xe2\x80\xae", b"\xf0\x9f\x98\x80", b"\n\t\n"))
    return data[:i] + piece + data[i:]


def alias_bomb(data: bytes, rnd: random.Random) -> bytes:
    """A billion-laughs block of nested aliases lands in a value."""
    depth = rnd.randint(3, 12)
    bomb = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    bomb += [f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]" for k in range(1, depth)]
    top = "\n".join(bomb) + "\n"
    if rnd.random() < 0.5:
        top = top.replace("a0: &a0 [lol", "description: &a0 [lol", 1)
    lines = _lines(data)
    spots = [i for i, ln in enumerate(lines) if _VALUE.match(ln)]
    if spots and rnd.random() < 0.7:
        i = rnd.choice(spots)
        lines[i] = _VALUE.match(lines[i]).group(1) + f"*a{depth - 1}".encode()
    return top.encode() + b"\n".join(lines)


def deep_nesting(data: bytes, rnd: random.Random) -> bytes:
    """A value nested thousands of levels deep (flow or block style)."""
    n = rnd.choice((100, 1000, 20000))
    nested = ("[" * n + "]" * n) if rnd.random() < 0.5 else ("[" * n)
    if rnd.random() < 0.3:
        nested = "\n" + "".join("  " * k + "- \n" for k in range(min(n, 2000)))
    lines = _lines(data)
    spots = [i for i, ln in enumerate(lines) if _VALUE.match(ln)]
    if not spots:
        return data
    i = rnd.choice(spots)
    lines[i] = _VALUE.match(lines[i]).group(1) + nested.encode()
    return b"\n".join(lines)


def grow(data: bytes, rnd: random.Random) -> bytes:
    """The file becomes large: a long list, a long string, many repeated blocks."""
    choice = rnd.randrange(3)
    if choice == 0:
        return data + b"\nextra: [" + b", ".join([b"1"] * rnd.choice((1000, 300000))) + b"]\n"
    if choice == 1:
        return data + b"\ndescription: " + b"x" * rnd.choice((10000, 2 << 20)) + b"\n"
    return data * rnd.choice((2, 20, 2000))


#: Every mutation with its weight: the common damage first, then the hostile kinds.
MUTATIONS = [(replace_value, 8), (replace_key, 3), (delete_line, 3), (duplicate_line, 3), (swap_lines, 1),
             (reindent_line, 3), (truncate, 2), (change_bytes, 3), (insert_bytes, 2), (alias_bomb, 1),
             (deep_nesting, 1), (grow, 1)]


#: The mutations that keep a file small (for a test run in seconds; `grow` makes megabytes).
LIGHT = [(f, w) for f, w in MUTATIONS if f is not grow]


def mutate(data: bytes, rnd: random.Random, steps: int | None = None,
           mutations=MUTATIONS) -> tuple[bytes, list[str]]:
    """Apply 1-3 weighted mutations; returns the bytes and the mutations' names."""
    funcs = [f for f, _ in mutations]
    weights = [w for _, w in mutations]
    names = []
    for _ in range(steps or rnd.choice((1, 1, 1, 2, 3))):
        f = rnd.choices(funcs, weights)[0]
        data = f(data, rnd)
        names.append(f.__name__)
    return data, names
