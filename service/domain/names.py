"""Names people choose (guests and accounts): what is accepted, how it is shown, and the key
that tells two account names apart. Pure: the same functions run wherever a name is compared,
and the database only ever compares the stored key (`accounts.name_key`), never `lower()`.

A name is shown as given after NFKC normalisation (fullwidth and other compatibility forms
become the ordinary ones) with every run of whitespace made one space and the ends trimmed. It
is refused (`invalid-name`) when it holds a control, format (zero-width, BOM, bidi overrides
and isolates, soft hyphen), surrogate, private-use, unassigned or line/paragraph-separator
character, an invisible letter (the Hangul fillers, the braille blank), a pile of more than
`MAX_MARKS` combining marks on one character (or a mark with nothing to sit on), no visible
character at all, or is not `NAME_MIN` to `NAME_MAX` characters long once normalised.

Two account names are the same name when their keys are equal: the Unicode TS #39 skeleton
(NFD, each character replaced by its prototype from Unicode's `confusables.txt`, NFD again) of
the name case-folded (NFKC, `str.casefold`, NFKC), with spaces removed. So a Cyrillic look-alike,
fullwidth forms, letter case or spacing never make a second person of the same name, and
`İLKER7` or `ΣΑΣ` fold the same way at registration and at login. The confusables are given
(the domain reads no file): Unicode's own `confusables.txt` (version in its header) ships with
the package and `service.store.confusables` reads it. No well-kept pure-Python package gives
TS #39 skeletons (PyICU does, but needs the ICU C++ library built on every machine).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from functools import cache

from service.domain.refusals import Malformed

NAME_MIN, NAME_MAX = 1, 40
MAX_MARKS = 3  # combining marks on one base character (scripts that stack them need 2 or 3)

# Letters and symbols that draw nothing (the Hangul fillers, the braille blank, Khmer inherent
# vowels, the combining grapheme joiner) and variation selectors: accepted by category, unseen.
_INVISIBLE = frozenset(
    [
        *(0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x17B4, 0x17B5, 0x034F, 0x180B, 0x180C, 0x180D),
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
    ]
)
# Cc control, Cf format (bidi controls among them), Cs surrogate, Co private use, Cn unassigned,
# Zl/Zp line and paragraph separators.
_REFUSED_CATEGORIES = frozenset(["Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"])


class InvalidName(Malformed):
    code = "invalid-name"
    title = "Names need a visible character and no hidden or control characters"


def _kind(char: str) -> str | None:
    """`B` a visible base character, `M` a combining mark, `S` a space, or None (refused)."""
    category = unicodedata.category(char)
    if ord(char) in _INVISIBLE or category in _REFUSED_CATEGORIES:
        return None
    if category[0] in "LNPS":
        return "B"
    if category[0] == "M":
        return "M"
    return "S" if category == "Zs" else None


def _accepted(char: str) -> str | None:
    """The kind of a character a name may hold: one whose NFKC form is one character of the
    same kind (so normalising never lengthens a name, adds a mark or makes a refused one)."""
    kind = _kind(char)
    folded = unicodedata.normalize("NFKC", char)
    if kind is None or len(folded) != 1:
        return None
    if kind == "S":
        return kind if folded.isspace() else None
    return kind if _kind(folded) == kind else None


def _char_class(ranges: list[tuple[int, int]]) -> str:
    def one(code: int) -> str:
        # \uXXXX in the Basic Multilingual Plane (ECMAScript and Python read it alike); the
        # character itself above it (ECMAScript's `u` mode and Python both read code points).
        return f"\\u{code:04x}" if code <= 0xFFFF else chr(code)

    return "[" + "".join(one(a) if a == b else f"{one(a)}-{one(b)}" for a, b in ranges) + "]"


def _ranges() -> Iterator[tuple[str, int, int]]:
    start, last, kind = 0, -1, None
    for code in range(0x110000):
        this = None if 0xD800 <= code <= 0xDFFF else _accepted(chr(code))
        if this != kind or code != last + 1:
            if kind is not None:
                yield kind, start, last
            start, kind = code, this
        last = code
    if kind is not None:
        yield kind, start, last


@cache
def name_pattern() -> str:
    """Every name the rules accept, as one regular expression (Python, and ECMAScript with its
    `u` flag): spaces around words of visible characters, each followed by at most `MAX_MARKS`
    combining marks. A name must match it; `display_name` then only normalises. (Unicode's
    tables as this Python knows them: `unicodedata.unidata_version`.) The API document gives
    tools `TOOL_PATTERN`, a superset they all read alike."""
    found: dict[str, list[tuple[int, int]]] = {"B": [], "M": [], "S": []}
    for kind, first, last in _ranges():
        found[kind].append((first, last))
    base, mark, space = (_char_class(found[k]) for k in "BMS")
    word = f"(?:{base}{mark}{{0,{MAX_MARKS}}})+"
    return f"^{space}*{word}(?:{space}+{word})*{space}*$(?!\\n)"


# What the API document gives tools as a name's `pattern` (issue 44 item 10): a superset of the
# rule that every regular-expression engine reads alike. The exact rule (`name_pattern`) cannot
# be one: it lists ranges of characters past U+FFFF, which Python and ECMAScript with its `u`
# flag read as code points but ECMAScript without `u` (Node's `new RegExp(p)`, Spectral) reads
# as surrogate pairs, where any such range (`[\U00020000-\U0002A6DF]`: high, low-high, low) is
# out of order and the whole pattern a syntax error; the one form without `u`, surrogate-pair
# escapes, matches nothing in Python or with `u`, and listing each such character instead would
# take megabytes. A negated class of characters below U+10000 matches a character past it in
# every one of those readings (a code point, or each half of its pair), so this pattern holds
# only such classes: no control, C1 control, soft hyphen, zero-width, bidi, line or paragraph
# separator, BOM or private-use character of the Basic Multilingual Plane (each refused by the
# rule: tests/unit/test_names.py), and at least one character that is not a space. The server
# holds a name to the exact rule (`display_name`: 422 `invalid-name`).
_REFUSED_BMP = (
    "\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b-\\u200f"
    "\\u2028-\\u202e\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb\\ue000-\\uf8ff"
)
TOOL_PATTERN = f"^[^{_REFUSED_BMP}]*[^{_REFUSED_BMP}\\s][^{_REFUSED_BMP}]*$(?!\\n)"


@cache
def _name_regex() -> re.Pattern[str]:
    return re.compile(name_pattern())


def display_name(raw: str) -> str:
    """The name as it is stored and shown, or `InvalidName`."""
    if _name_regex().match(raw) is None:
        bad = next((c for c in raw if _accepted(c) is None), None)
        if bad is not None:
            raise InvalidName(f"A name cannot hold the character U+{ord(bad):04X}.")
        raise InvalidName(
            f"A name is words of visible characters, each with at most {MAX_MARKS} combining "
            "marks on a character, and spaces between them."
        )
    name = unicodedata.normalize("NFKC", raw)
    marks = 0
    for char in name:
        if unicodedata.category(char) in _REFUSED_CATEGORIES or ord(char) in _INVISIBLE:
            raise InvalidName(f"A name cannot hold the character U+{ord(char):04X}.")
        marks = marks + 1 if unicodedata.category(char).startswith("M") else 0
        if marks > MAX_MARKS:
            raise InvalidName(f"At most {MAX_MARKS} combining marks on one character.")
    name = " ".join(name.split())
    if not any(unicodedata.category(c)[0] in "LNPS" for c in name):
        raise InvalidName("A name needs at least one visible character.")
    if not NAME_MIN <= len(name) <= NAME_MAX:
        raise InvalidName(f"A name is {NAME_MIN} to {NAME_MAX} characters.")
    if unicodedata.category(name[0]).startswith("M"):
        raise InvalidName("A name cannot start with a combining mark.")
    return name


def name_key(name: str, prototypes: Mapping[str, str]) -> str:
    """The key two account names are compared by (see the module docstring); `prototypes`:
    Unicode's confusables, as `service.store.confusables.prototypes()` reads them."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return skeleton("".join(folded.split()), prototypes)


def skeleton(text: str, prototypes: Mapping[str, str]) -> str:
    """Unicode TS #39 §4 skeleton: NFD, map every code point to its prototype, NFD."""
    mapped = "".join(prototypes.get(c, c) for c in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)
