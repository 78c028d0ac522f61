"""The input guard (service/api/limits.py `json_problem`): its shortcut for bodies that cannot
nest too deep and hold no escape answers exactly as the byte-by-byte scan would."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from service.api.limits import json_problem

# Strings with anything in them: NUL, surrogates (lone or paired), non-ASCII.
TEXT = st.text(alphabet=st.characters(blacklist_categories=()), max_size=4)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12,
)


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    return []


def _is_text(s: str) -> bool:
    try:
        s.encode("utf-8")  # a lone surrogate is not Unicode text
    except UnicodeEncodeError:
        return False
    return "\x00" not in s


@given(VALUES, st.integers(min_value=0, max_value=5), st.booleans())
def test_a_body_is_refused_exactly_when_it_nests_too_deep_or_holds_what_is_not_text(
    value: Any, max_depth: int, escaped: bool
) -> None:
    body = json.dumps(value, ensure_ascii=escaped).encode("utf-8", "surrogatepass")
    acceptable = _depth(value) <= max_depth and all(_is_text(s) for s in _strings(value))
    assert (json_problem(body, max_depth) is None) == acceptable


def test_a_move_takes_the_shortcut_and_a_deep_body_does_not() -> None:
    assert json_problem(b'{"type":"confirm","bee":17,"move_id":"m1"}') is None
    assert json_problem(b"[" * 33 + b"]" * 33) is not None
    assert json_problem(b'{"a":"\\u0000"}') is not None
    assert json_problem(b'{"a":"\\ud800"}') is not None
    assert json_problem(b'{"a":"\\ud83d\\ude00"}') is None
