"""How the audit writes values into its reasons."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from service.domain.rules.events import GameEvent, event_type


def bees(values: Sequence[int]) -> str:
    return " ".join(str(bee) for bee in values)


def _show(value: object) -> str:
    return msgspec.json.encode(value).decode()


def _tag(value: msgspec.Struct) -> str:
    return event_type(value) if isinstance(value, GameEvent) else type(value).__name__


def differences(got: msgspec.Struct, want: msgspec.Struct, *, want_first: bool = False) -> str:
    """How two structs differ, field by field ("expected" is `want`)."""
    if type(got) is not type(want):
        return f"{_tag(want)}, but {_tag(got)} was recorded"
    parts = []
    for field in want.__struct_fields__:
        a, b = getattr(got, field), getattr(want, field)
        if a != b:
            parts.append(f"{field} {_show(b)} (recorded {_show(a)})")
    label = f"{_tag(want)} with " if want_first else ""
    return label + "; ".join(parts)
