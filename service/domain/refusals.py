"""Why the domain refused something: the base of every refusal, in two families.

As python-chess splits them: `Malformed` is wrong whatever the state (a stem numbered 7, a
name of control characters); `NotAllowedNow` is well formed but not allowed in this state (a
bee you do not hold, a buy-in above your coins, a name someone has). The HTTP layer answers the
first with 422 and the second with 409 (`service/api/problems.py`); each class carries a stable
`code` that clients can switch on, and a `title`. The rules of a game refine them as
`RuleViolation` (`InvalidMove`, `IllegalMove`, in `rules/errors.py`); refusals that are not
moves of a game (coins, accounts, names) subclass these two directly.
"""

from __future__ import annotations

from typing import ClassVar


class Refused(ValueError):
    """Never raised itself: every refusal is a subclass with its own catalogued `code`
    (`service/api/problems.py`, `CATALOGUE`) and `title`."""

    code: ClassVar[str]
    title: ClassVar[str]

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class Malformed(Refused):
    """Wrong whatever the state: 422."""


class NotAllowedNow(Refused):
    """Well formed, but not allowed in this state: 409."""
