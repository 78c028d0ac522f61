"""What a player recorded during play, for the audit to hold the export to.

A forger holding the published server seed can derive another deal, play another legal game and
recompute every hash: the export then agrees with itself. It cannot agree with values a player
kept from before the end: the commitment (from `getTable` or `game_prepared`), the fingerprint
(`game_started.proof`, before turn 1) and any event's chain hash (each event a player sees
carries it; `getGame` carries the head). Each expectation is checked by the step that owns the
value: the commitment by `commitment`, the fingerprint by `fairness`, heads by `chain`, and the
table stream's heads by `commitment` (the table's events prove the commitment came first).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HASH = re.compile(r"[0-9a-f]{64}")

Head = tuple[int, str]  # (version, hash as 64 lowercase hex digits)


@dataclass(frozen=True, slots=True)
class Expectations:
    commitment: str | None = None
    fingerprint: str | None = None
    heads: tuple[Head, ...] = ()  # of the game stream
    table_heads: tuple[Head, ...] = ()  # of the table stream

    @property
    def any(self) -> bool:
        return bool(self.commitment or self.fingerprint or self.heads or self.table_heads)


NOTHING = Expectations()


def parse_hash(text: str) -> str:
    """A SHA-256 value as recorded: exactly 64 lowercase hex digits (uppercase is refused, as
    everywhere in the scheme, so two verifiers never disagree on what was recorded)."""
    if not _HASH.fullmatch(text):
        raise ValueError(f"{text!r} is not 64 lowercase hex digits")
    return text


def parse_head(text: str) -> Head:
    """`VERSION:HASH`, e.g. `12:3f…` (the version a decimal integer from 1)."""
    version, sep, digest = text.partition(":")
    if not sep or not version.isdigit() or int(version) < 1:
        raise ValueError(f"{text!r} is not VERSION:HASH with a version from 1")
    return int(version), parse_hash(digest)
