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
    InvalidName,
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
def test_every_name_the_document_allows_is_accepted(raw: str) -> None:
    """The document's pattern (`name_pattern`, with `maxLength`) is exactly the rule: what
    matches it is a name (and what does not is refused, by `display_name`'s first check)."""
    shown = display_name(raw)
    assert NAME_MIN <= len(shown) <= NAME_MAX


@given(st.text(max_size=NAME_MAX))
def test_a_name_the_pattern_refuses_is_refused(raw: str) -> None:
    if re.match(name_pattern(), raw) is None:
        with pytest.raises(InvalidName):
            display_name(raw)
    else:
        display_name(raw)
