"""Why a command of the game was refused: a `RuleViolation`, in the two families of every
refusal (`service/domain/refusals.py`).

An `InvalidMove` is malformed whatever the state of the game (a stem numbered 7), an
`IllegalMove` is well formed but not allowed now (a bee you do not hold, a second confirm). The
HTTP layer maps the first to 422 and the second to 409; each class carries a stable `code` that
clients can switch on.
"""

from __future__ import annotations

from service.domain.refusals import Malformed, NotAllowedNow, Refused


class RuleViolation(Refused):
    code = "rule-violation"
    title = "The move breaks a rule"


class InvalidMove(RuleViolation, Malformed):
    code = "invalid-move"
    title = "The move is malformed"


class IllegalMove(RuleViolation, NotAllowedNow):
    code = "illegal-move"
    title = "The move is not allowed now"


class StemOutOfRange(InvalidMove):
    code = "stem-out-of-range"
    title = "There is no such stem"


class InvalidDeal(InvalidMove):
    code = "invalid-deal"
    title = "The deal is not a shuffle of this table's deck"


class InvalidSeats(InvalidMove):
    code = "invalid-seats"
    title = "The seats do not make a table of 2 to 8"


class BeeNotInHand(IllegalMove):
    code = "bee-not-in-hand"
    title = "That bee is not in your hand"


class AlreadyConfirmed(IllegalMove):
    code = "already-confirmed"
    title = "Your pick for this turn is already confirmed"


class NothingTapped(IllegalMove):
    code = "nothing-tapped"
    title = "Tap a bee before you confirm"


class NotYourDecision(IllegalMove):
    code = "not-your-decision"
    title = "It is not your decision to make now"


class SeatNotPlaying(IllegalMove):
    code = "seat-not-playing"
    title = "That seat is not playing in this game"


class GameNotStarted(IllegalMove):
    code = "game-not-started"
    title = "The game has not started"


class GameAlreadyStarted(IllegalMove):
    code = "game-already-started"
    title = "The game has already started"


class GameNotOver(IllegalMove):
    code = "game-not-over"
    title = "The game has not ended"


class GameOver(IllegalMove):
    code = "game-over"
    title = "The game has ended"
