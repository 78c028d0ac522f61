"""Names (issue 13, item 8): what is refused, how a name is shown, and which names are the same
account name (the TS #39 skeleton of the case-folded name)."""

from __future__ import annotations

import os
import re
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.domain.names import (
    NAME_MAX,
    NAME_MIN,
    TOOL_PATTERN,
    InvalidName,
    _accepted,
    display_name,
    name_pattern,
    skeleton,
)
from service.store.confusables import prototypes
from service.usecases.accounts import name_key  # the domain's key, given Unicode's confusables

REFUSED = {
    "only spaces": "   ",
    "ideographic space": "\u3000\u3000",
    "zero-width space": "\u200b",
    "zero-width joiner inside": "Ad\u200da",
    "BOM": "\ufeffAda",
    "Hangul filler": "\u3164",
    "halfwidth Hangul filler": "\uffa0",
    "right-to-left override": "\u202eAda",
    "isolate": "\u2066Ada\u2069",
    "C1 control": "Ada\x85",
    "newline at the end": "Ada\n",
    "NUL": "A\x00da",
    "tab": "A\tda",
    "mark pile": "a" + "\u0301" * 12,
    "leading mark": "\u0301Ada",
    "line separator": "Ada\u2028",
    "private use": "\ue000Ada",
    "braille blank": "\u2800",
    "too long": "a" * 41,
    "too long after NFKC": "\ufdfa" * 3,
}


@pytest.mark.parametrize("raw", REFUSED.values(), ids=REFUSED.keys())
def test_invisible_control_and_format_names_are_refused(raw: str) -> None:
    with pytest.raises(InvalidName):
        display_name(raw)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("Ada", "Ada"),
        ("  Ada   Lovelace ", "Ada Lovelace"),
        ("Ａｄａ", "Ada"),  # fullwidth
        ("Ada\u3000L", "Ada L"),
        ("İLKER7", "İLKER7"),
        ("ΣΑΣ", "ΣΑΣ"),
        ("Nguyễn", "Nguyễn"),
        ("李小龍", "李小龍"),
        ("🐝", "🐝"),
    ],
)
def test_names_are_shown_nfkc_with_spaces_tidied(raw: str, shown: str) -> None:
    assert display_name(raw) == shown


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("paypal", "pаypal"),  # Cyrillic а
        ("Ada", "Ａｄａ"),  # fullwidth
        ("Ada Lovelace", "AdaLovelace"),  # spaces
        ("ada", "ADA"),
        ("İLKER7", "i̇lker7"),  # what casefold makes of İ
        ("ΣΑΣ", "σας"),  # final sigma
        ("ΣΑΣ", "σασ"),
    ],
)
def test_look_alikes_have_one_key(a: str, b: str) -> None:
    assert name_key(display_name(a)) == name_key(display_name(b))


def test_different_names_have_different_keys() -> None:
    assert name_key("Ada") != name_key("Bob")
    assert name_key("Ada") != name_key("Adam")


def test_skeleton_follows_ts39_examples() -> None:
    # TS #39 §4: "paypal" with a Cyrillic а and with a Latin a share a skeleton.
    table = prototypes()
    assert skeleton("p\u0430ypal", table) == skeleton("paypal", table)
    assert skeleton("ℝ", table) == skeleton("R", table)
    assert len(table) > 6000  # the whole of Unicode's file was read


@given(st.text(max_size=50))
def test_accepted_names_are_stable_and_visible(raw: str) -> None:
    try:
        shown = display_name(raw)
    except InvalidName:
        return
    assert display_name(shown) == shown  # idempotent: shown names are accepted as they are
    assert shown == shown.strip() and "\n" not in shown
    assert any(unicodedata.category(c)[0] in "LNPS" for c in shown)
    assert name_key(shown)  # every accepted name has a key to be found by


# Each name drawn from the pattern takes Hypothesis about 0.2 s (the pattern's classes hold most
# of Unicode): 60 in `make test`, more under `make fuzz`.
NAME_EXAMPLES = int(os.environ.get("SWARM_NAME_EXAMPLES", "60"))


@pytest.mark.slow
@settings(max_examples=NAME_EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(st.from_regex(name_pattern(), fullmatch=True).filter(lambda n: len(n) <= NAME_MAX))
def test_every_name_the_rules_pattern_allows_is_accepted(raw: str) -> None:
    """The exact rule's pattern (`name_pattern`, with the length) is the rule: what matches it
    is a name (and what does not is refused, by `display_name`'s first check)."""
    shown = display_name(raw)
    assert NAME_MIN <= len(shown) <= NAME_MAX


@given(st.text(max_size=NAME_MAX))
def test_a_name_the_pattern_refuses_is_refused(raw: str) -> None:
    if re.match(name_pattern(), raw) is None:
        with pytest.raises(InvalidName):
            display_name(raw)
    else:
        display_name(raw)


# --- the document's pattern: a superset every tool reads (issue 44 item 10) -----------------

TOOL = re.compile(TOOL_PATTERN)
ALLOWED = re.compile(TOOL_PATTERN.split("]*", 1)[0][1:] + "]")  # the pattern's own class


def test_the_documents_pattern_is_short_and_holds_no_character_past_u_ffff() -> None:
    """Node's `new RegExp(pattern)` threw on the exact rule's 19,543 characters, which hold
    ranges past U+FFFF that only ECMAScript's `u` flag reads as characters."""
    assert len(TOOL_PATTERN) < 400
    assert TOOL_PATTERN.isascii()
    assert len(name_pattern()) > 10_000 and not name_pattern().isascii()


def test_every_character_the_rule_takes_the_documents_pattern_takes() -> None:
    """Every code point: what the rule accepts in a name the pattern's class allows, so no
    valid name fails the document; what the class refuses, the rule refuses."""
    for code in range(0x110000):
        char = chr(code)
        if 0xD800 <= code <= 0xDFFF:
            continue
        if _accepted(char) is not None:
            assert ALLOWED.fullmatch(char), hex(code)
        elif code < 0x10000 and not ALLOWED.fullmatch(char):
            assert _accepted(char) is None, hex(code)
    # A name needs one visible character; the pattern needs one that is not a space.
    assert TOOL.match("A") and not TOOL.match("   ") and not TOOL.match("\u3000")


@given(st.text(max_size=NAME_MAX))
def test_a_name_the_rule_accepts_matches_the_documents_pattern(raw: str) -> None:
    try:
        display_name(raw)
    except InvalidName:
        return
    assert TOOL.match(raw), raw
